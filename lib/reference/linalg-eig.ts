// Reference rules for lax.linalg.qr, eigh and svd in float64: the same
// algorithms as the kernels (render/linalg-eig.ts, linalg-jacobi.ts) written
// plainly in JS, so the oracle picks the same reflector signs, eigenvector
// order and completion of singular vectors: Householder QR with LAPACK's
// dlarfg signs, round-robin Jacobi for eigh (two-sided) and svd (one-sided).
import type { PrimitiveParams } from '../core/primitives.js';
import type { RefArray } from './array.js';

const EPS = 2.220446049250313e-16;

function dims(x: RefArray): [number, number, number] {
  const r = x.shape.length;
  const m = x.shape[r - 2]!;
  const n = x.shape[r - 1]!;
  return [x.shape.slice(0, r - 2).reduce((a, b) => a * b, 1), m, n];
}

/** The Jacobi rotation (cos, sin) zeroing the off-diagonal entry of [[app, apq], [apq, aqq]]. */
function rotation(app: number, aqq: number, apq: number): [number, number] {
  const theta = (aqq - app) / (2 * apq);
  const t = Math.abs(theta) > 1e18 ? 1 / (2 * theta) : Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
  const c = 1 / Math.sqrt(t * t + 1);
  return [c, t * c];
}

/**
 * Pair k of round r of the round-robin (circle method) tournament of 2P indices, 2P - 1 fixed (for an odd size it is
 * a dummy): [p, q] with p < q. Every pair meets once in 2P - 1 rounds, and a round's pairs are disjoint.
 */
function tournamentPair(P: number, r: number, k: number): [number, number] {
  const NP = 2 * P;
  const i = k === 0 ? NP - 1 : (r + k) % (NP - 1);
  const j = k === 0 ? r : (r + NP - 1 - k) % (NP - 1);
  return i < j ? [i, j] : [j, i];
}

export function qrRule([x]: RefArray[], { fullMatrices }: PrimitiveParams['qr']): Float64Array[] {
  const [batch, m, n] = dims(x!);
  const k = Math.min(m, n);
  const qc = fullMatrices ? m : k;
  const qOut = new Float64Array(batch * m * qc);
  const rOut = new Float64Array(batch * qc * n);
  for (let b = 0; b < batch; b++) {
    const W = x!.data.slice(b * m * n, (b + 1) * m * n);
    const tau = new Float64Array(k);
    for (let j = 0; j < k; j++) {
      const alpha = W[j * n + j]!;
      let xnorm2 = 0;
      for (let a = j + 1; a < m; a++) xnorm2 += W[a * n + j]! ** 2;
      if (xnorm2 === 0) continue;
      const beta = -(Object.is(alpha, -0) || alpha < 0 ? -1 : 1) * Math.sqrt(alpha * alpha + xnorm2);
      tau[j] = (beta - alpha) / beta;
      for (let a = j + 1; a < m; a++) W[a * n + j]! /= alpha - beta;
      W[j * n + j] = beta;
      for (let c = j + 1; c < n; c++) {
        let dot = W[j * n + c]!;
        for (let a = j + 1; a < m; a++) dot += W[a * n + j]! * W[a * n + c]!;
        dot *= tau[j]!;
        W[j * n + c]! -= dot;
        for (let a = j + 1; a < m; a++) W[a * n + c]! -= dot * W[a * n + j]!;
      }
    }
    for (let a = 0; a < qc; a++) for (let c = a; c < n; c++) rOut[b * qc * n + a * n + c] = W[a * n + c]!;
    const Q = qOut.subarray(b * m * qc, (b + 1) * m * qc);
    for (let a = 0; a < Math.min(m, qc); a++) Q[a * qc + a] = 1;
    for (let j = k - 1; j >= 0; j--) {
      if (tau[j] === 0) continue;
      for (let c = j; c < qc; c++) {
        let dot = Q[j * qc + c]!;
        for (let a = j + 1; a < m; a++) dot += W[a * n + j]! * Q[a * qc + c]!;
        dot *= tau[j]!;
        Q[j * qc + c]! -= dot;
        for (let a = j + 1; a < m; a++) Q[a * qc + c]! -= dot * W[a * n + j]!;
      }
    }
  }
  return [qOut, rOut];
}

export function eighRule([x]: RefArray[], { lower, sortEigenvalues }: PrimitiveParams['eigh']): Float64Array[] {
  const [batch, , n] = dims(x!);
  const vOut = new Float64Array(batch * n * n);
  const wOut = new Float64Array(batch * n);
  for (let b = 0; b < batch; b++) {
    const A = x!.data.subarray(b * n * n, (b + 1) * n * n);
    const W = new Float64Array(n * n);
    const V = vOut.subarray(b * n * n, (b + 1) * n * n);
    for (let a = 0; a < n; a++) {
      V[a * n + a] = 1;
      for (let c = 0; c < n; c++) W[a * n + c] = (lower ? a >= c : a <= c) ? A[a * n + c]! : A[c * n + a]!;
    }
    const P = Math.floor((n + 1) / 2);
    const cs = new Float64Array(P), sn = new Float64Array(P);
    for (let sweep = 0; sweep < 60; sweep++) {
      let off = 0;
      let all = 0;
      for (let k = 0; k < P; k++) {
        let o = 0, l = 0;
        for (let a = 2 * k; a < 2 * k + 2 && a < n; a++) for (let c = 0; c < n; c++) { const e = W[a * n + c]! ** 2; l += e; if (a !== c) o += e; }
        off += o; all += l;
      }
      if (!(off > all * EPS * EPS)) break;
      for (let r = 0; r < 2 * P - 1; r++) {
        for (let k = 0; k < P; k++) {
          const [p, q] = tournamentPair(P, r, k);
          [cs[k], sn[k]] = q < n && W[p * n + q] !== 0 ? rotation(W[p * n + p]!, W[q * n + q]!, W[p * n + q]!) : [1, 0];
        }
        // W <- J^T W (the pairs' rows), then W <- W J and V <- V J (their columns); a rotated pair's own entry is zero
        for (let k = 0; k < P; k++) {
          if (sn[k] === 0) continue;
          const [p, q] = tournamentPair(P, r, k);
          for (let c = 0; c < n; c++) {
            const wp = W[p * n + c]!, wq = W[q * n + c]!;
            W[p * n + c] = cs[k]! * wp - sn[k]! * wq; W[q * n + c] = sn[k]! * wp + cs[k]! * wq;
          }
        }
        for (let a = 0; a < n; a++) {
          for (let k = 0; k < P; k++) {
            if (sn[k] === 0) continue;
            const [p, q] = tournamentPair(P, r, k);
            const wp = W[a * n + p]!, wq = W[a * n + q]!;
            W[a * n + p] = a === q ? 0 : cs[k]! * wp - sn[k]! * wq; W[a * n + q] = a === p ? 0 : sn[k]! * wp + cs[k]! * wq;
            const vp = V[a * n + p]!, vq = V[a * n + q]!;
            V[a * n + p] = cs[k]! * vp - sn[k]! * vq; V[a * n + q] = sn[k]! * vp + cs[k]! * vq;
          }
        }
      }
    }
    const E = wOut.subarray(b * n, (b + 1) * n);
    for (let a = 0; a < n; a++) E[a] = W[a * n + a]!;
    if (sortEigenvalues) {
      for (let a = 0; a < n; a++) {
        let best = a;
        for (let c = a + 1; c < n; c++) if (E[c]! < E[best]!) best = c;
        if (best === a) continue;
        [E[a], E[best]] = [E[best]!, E[a]!];
        for (let c = 0; c < n; c++) [V[c * n + a], V[c * n + best]] = [V[c * n + best]!, V[c * n + a]!];
      }
    }
  }
  return [vOut, wOut];
}

export function svdRule([x]: RefArray[], { fullMatrices, computeUv }: PrimitiveParams['svd']): Float64Array[] {
  const [batch, m, n] = dims(x!);
  const wide = m < n;
  const M = Math.max(m, n);
  const N = Math.min(m, n);
  const uc = fullMatrices ? m : N;
  const vr = fullMatrices ? n : N;
  const sOut = new Float64Array(batch * N);
  const uOut = new Float64Array(batch * m * uc);
  const vtOut = new Float64Array(batch * vr * n);
  for (let b = 0; b < batch; b++) {
    const A = x!.data.subarray(b * m * n, (b + 1) * m * n);
    const G = new Float64Array(M * N);
    const V = new Float64Array(N * N);
    for (let a = 0; a < M; a++) for (let c = 0; c < N; c++) G[a * N + c] = wide ? A[c * n + a]! : A[a * n + c]!;
    for (let a = 0; a < N; a++) V[a * N + a] = 1;
    const P = Math.floor((N + 1) / 2);
    const cs = new Float64Array(P), sn = new Float64Array(P);
    for (let sweep = 0; sweep < 60; sweep++) {
      let rotated = false;
      for (let r = 0; r < 2 * P - 1; r++) {
        for (let k = 0; k < P; k++) {
          const [p, q] = tournamentPair(P, r, k);
          cs[k] = 1; sn[k] = 0;
          if (q >= N) continue;
          let alpha = 0, beta = 0, gamma = 0;
          for (let a = 0; a < M; a++) { const gp = G[a * N + p]!, gq = G[a * N + q]!; alpha += gp * gp; beta += gq * gq; gamma += gp * gq; }
          if (!(Math.abs(gamma) > EPS * Math.sqrt(alpha) * Math.sqrt(beta))) continue;
          rotated = true;
          [cs[k], sn[k]] = rotation(alpha, beta, gamma);
        }
        for (let k = 0; k < P; k++) {
          if (sn[k] === 0) continue;
          const [p, q] = tournamentPair(P, r, k);
          const c = cs[k]!, s = sn[k]!;
          for (let a = 0; a < M; a++) {
            const gp = G[a * N + p]!, gq = G[a * N + q]!;
            G[a * N + p] = c * gp - s * gq; G[a * N + q] = s * gp + c * gq;
          }
          for (let a = 0; a < N; a++) {
            const vp = V[a * N + p]!, vq = V[a * N + q]!;
            V[a * N + p] = c * vp - s * vq; V[a * N + q] = s * vp + c * vq;
          }
        }
      }
      if (!rotated) break;
    }
    const S = sOut.subarray(b * N, (b + 1) * N);
    for (let c = 0; c < N; c++) {
      let norm2 = 0;
      for (let a = 0; a < M; a++) norm2 += G[a * N + c]! ** 2;
      S[c] = Math.sqrt(norm2);
    }
    for (let a = 0; a < N; a++) {
      let best = a;
      for (let c = a + 1; c < N; c++) if (S[c]! > S[best]!) best = c;
      if (best === a) continue;
      [S[a], S[best]] = [S[best]!, S[a]!];
      for (let c = 0; c < M; c++) [G[c * N + a], G[c * N + best]] = [G[c * N + best]!, G[c * N + a]!];
      for (let c = 0; c < N; c++) [V[c * N + a], V[c * N + best]] = [V[c * N + best]!, V[c * N + a]!];
    }
    if (!computeUv) continue;
    const bc = fullMatrices ? M : N;
    const B = new Float64Array(M * M);
    for (let c = 0; c < N; c++) for (let a = 0; a < M; a++) B[a * M + c] = S[c]! > 0 ? G[a * N + c]! / S[c]! : 0;
    const filled = (o: number, c: number) => (o < N && S[o]! > 0) || o < c;
    let candidate = 0;
    for (let c = 0; c < bc; c++) {
      if (c < N && S[c]! > 0) continue;
      for (; candidate < M; candidate++) {
        for (let a = 0; a < M; a++) B[a * M + c] = a === candidate ? 1 : 0;
        for (let pass = 0; pass < 2; pass++) {
          for (let o = 0; o < bc; o++) {
            if (o === c || !filled(o, c)) continue;
            let dot = 0;
            for (let a = 0; a < M; a++) dot += B[a * M + o]! * B[a * M + c]!;
            for (let a = 0; a < M; a++) B[a * M + c]! -= dot * B[a * M + o]!;
          }
        }
        let norm2 = 0;
        for (let a = 0; a < M; a++) norm2 += B[a * M + c]! ** 2;
        if (norm2 > 0.25) {
          for (let a = 0; a < M; a++) B[a * M + c]! /= Math.sqrt(norm2);
          candidate++;
          break;
        }
      }
    }
    for (let a = 0; a < m; a++) for (let c = 0; c < uc; c++) uOut[b * m * uc + a * uc + c] = wide ? V[a * N + c]! : B[a * M + c]!;
    for (let a = 0; a < vr; a++) for (let c = 0; c < n; c++) vtOut[b * vr * n + a * n + c] = wide ? B[c * M + a]! : V[c * N + a]!;
  }
  return computeUv ? [sOut, uOut, vtOut] : [sOut];
}
