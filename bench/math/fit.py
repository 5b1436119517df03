# Coefficients of the float math in cuda/kernels/jaxon_math.h (issue 16): least-squares fits on Chebyshev nodes in
# 40-digit arithmetic (mpmath), which come within a small factor of the minimax error, and the bits of 2/pi for the
# sin/cos/tan argument reduction. Prints C constants; `python3 bench/math/fit.py` reproduces them.
import mpmath as mp

mp.mp.dps = 40


def fit(f, lo, hi, basis, degree, weight, points=400):
    """Coefficients c[0..degree] minimizing sum((f(x) - sum c_k basis(x, k)) * weight(x))^2 over Chebyshev nodes."""
    xs = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (i + mp.mpf(1) / 2) / points) for i in range(points)]
    a = mp.matrix(points, degree + 1)
    b = mp.matrix(points, 1)
    for i, x in enumerate(xs):
        w = weight(x)
        for k in range(degree + 1):
            a[i, k] = basis(x, k) * w
        b[i] = f(x) * w
    c, _ = mp.qr_solve(a, b)
    err = max(abs((f(x) - sum(c[k] * basis(x, k) for k in range(degree + 1))) * weight(x)) for x in xs)
    return [c[k] for k in range(degree + 1)], err


def show(name, coefficients, err):
    print(f'/* {name}: max weighted error {mp.nstr(err, 3)} (2^{mp.nstr(mp.log(err, 2), 4)}) */')
    for c in coefficients:
        print(f'  {float(c).hex()}, /* {mp.nstr(c, 17)} */')


def odd_tail(g, degree, hi, name):
    """g(t) = t + t z P(z), z = t^2, relative error of g over (0, hi]."""
    f = lambda z: (g(mp.sqrt(z)) / mp.sqrt(z) - 1) / z
    coefficients, _ = fit(f, mp.mpf(hi) ** 2 * mp.mpf('1e-30'), mp.mpf(hi) ** 2, lambda z, k: z ** k, degree,
                          lambda z: z * mp.sqrt(z) / g(mp.sqrt(z)))
    ts = [mp.mpf(hi) * (i + 1) / 2000 for i in range(2000)]
    err = max(abs((t + t * t * t * sum(c * (t * t) ** k for k, c in enumerate(coefficients))) / g(t) - 1) for t in ts)
    show(f'{name}: P(z) of degree {degree}, relative error of t + t z P(z) on (0, {hi}]', coefficients, err)


if __name__ == '__main__':
    import sys
    what = sys.argv[1:] or ['atan', 'asin', 'erf', 'twopi']
    if 'atan' in what:
        for d in (7, 8, 9):
            odd_tail(mp.atan, d, mp.tan(mp.pi / 8), 'atan')
    if 'asin' in what:
        for d in (8, 9, 10):
            odd_tail(mp.asin, d, mp.mpf('0.5'), 'asin')
    if 'erf' in what:
        for d in (7, 8, 9, 10):
            # erf(x) = x P(x^2) on [0, 1], relative
            f = lambda z: mp.erf(mp.sqrt(z)) / mp.sqrt(z) if z > 0 else 2 / mp.sqrt(mp.pi)
            c, err = fit(f, mp.mpf(0), mp.mpf(1), lambda z, k: z ** k, d, lambda z: 1)
            show(f'erf small: x P(x^2) degree {d} on [0, 1]', c, err)
        for lo, hi, d in ((1, 4, 18), (1, 4, 20), (1, 4, 22), (1, 2.5, 12), (2.5, 4, 12), (1, 2.5, 14), (2.5, 4, 14)):
            mid = mp.mpf(lo + hi) / 2
            c, err = fit(lambda x: mp.erf(x), mp.mpf(lo), mp.mpf(hi), lambda x, k: (x - mid) ** k, d, lambda x: 1)
            show(f'erf large: Q(x - {mp.nstr(mid, 5)}) degree {d} on [{lo}, {hi}], absolute', c, err)
    if 'twopi' in what:
        mp.mp.dps = 120
        bits = int(mp.floor(2 / mp.pi * mp.mpf(2) ** 240))
        def chunk(first, count):
            # bits first .. first + count - 1 of 2/pi (bit 1 is the 2^-1 place), as a double
            v = (bits >> (240 - (first + count - 1))) & ((1 << count) - 1)
            return mp.mpf(v) * mp.mpf(2) ** (-(first + count - 1))
        print('/* 28-bit chunks of 2/pi */')
        for j in range(6):
            print(f'  {float(chunk(28 * j + 1, 28)).hex()},')
        print('/* 53-bit tails */')
        for j in range(3, 7):
            print(f'  {float(chunk(28 * j + 1, 53)).hex()},')
