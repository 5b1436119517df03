// Lowering of lax.linalg.qr: one launch of kernel-ir.ts's OrthogonalKernel
// over the batch (render/linalg-eig.ts's one-thread loop on the C target,
// render/linalg-qr.ts's block per matrix on CUDA), its working storage (the
// reflectors, m·n, and their taus, min(m, n), per matrix) in temps. On the C
// target a kernel for matrices from the blocked size up also carries
// render/linalg-qr-blocked.ts's blocked geqrf/orgqr (cpuBlocked).
import type { ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import type { OrthogonalKernel } from './kernel-ir.js';
import type { BufferRef, LowerTarget, Plan } from './lower.js';
import { cpuQrBlocked } from './render/linalg-qr-blocked.js';

export function lowerQr(x: ShapedArray, fullMatrices: boolean, target: LowerTarget): Plan {
  const r = x.shape.length;
  const m = x.shape[r - 2]!;
  const n = x.shape[r - 1]!;
  const batch = sizeOf(x.shape.slice(0, r - 2));
  const plan: Plan = { launches: [], temps: [], aliases: new Map() };
  if (batch === 0) return plan;
  const cpuBlocked = target === 'cpu' ? cpuQrBlocked(x.dtype, m, n) : undefined;
  const kernel: OrthogonalKernel = {
    kind: 'orthogonal', op: 'qr', dtype: x.dtype, fullMatrices, computeUv: true, lower: true, sort: true, ...(cpuBlocked ? { cpuBlocked } : {}),
  };
  const temp = (index: number): BufferRef => ({ kind: 'temp', index });
  // a temp of 0 elements still gets a buffer: the kernel's pointer arithmetic on it is never dereferenced
  for (const size of [m * n, Math.min(m, n)]) plan.temps.push({ dtype: x.dtype, size: Math.max(1, batch * size) });
  plan.launches.push({ kernel, buffers: [{ kind: 'output', index: 0 }, { kind: 'output', index: 1 }, temp(0), temp(1), { kind: 'input', index: 0 }], params: [batch, m, n] });
  return plan;
}
