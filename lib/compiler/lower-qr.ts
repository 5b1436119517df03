// Lowering of lax.linalg.qr: one launch of kernel-ir.ts's OrthogonalKernel
// over the batch (render/linalg-eig.ts's one-thread loop on the C target,
// render/linalg-qr.ts's block per matrix on CUDA), its working storage (the
// reflectors, m·n, and their taus, min(m, n), per matrix) in temps. On the C
// target a kernel for matrices from the blocked size up also carries
// render/linalg-qr-blocked.ts's blocked geqrf/orgqr (cpuBlocked). On CUDA,
// large matrices (render/linalg-cuda-blocked.ts's threshold and batch limit,
// JAXON_CUDA_BLOCKED_LINALG=MIN[:NB]) take render/linalg-qr-cuda-blocked.ts's
// stages instead: the operand copied into work, the ticket counters zeroed,
// then the fixed sequence of stage launches, all with the same params.
import type { ShapedArray } from '../core/primitives.js';
import { sizeOf } from '../core/shape.js';
import type { OrthogonalKernel } from './kernel-ir.js';
import { type BufferRef, type Launch, type LowerTarget, type Plan, copyKernel, zerosKernel } from './lower.js';
import { cudaBlockedWidth } from './render/linalg-cuda-blocked.js';
import { cpuQrBlocked } from './render/linalg-qr-blocked.js';
import { QR_STATE_SIZE, qrSchedule, qrStageTemps } from './render/linalg-qr-cuda-blocked.js';

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
  const input: BufferRef = { kind: 'input', index: 0 };
  const outputs: BufferRef[] = [{ kind: 'output', index: 0 }, { kind: 'output', index: 1 }];
  // LU's measure (min(m, n)) decides, as for the other blocked factorizations
  const nb = target === 'cuda' ? cudaBlockedWidth('lu', x.dtype, batch, Math.min(m, n), 0) : 0;
  if (nb) {
    const { t, y } = qrStageTemps(m, n, nb, fullMatrices);
    plan.temps.push(
      { dtype: x.dtype, size: batch * m * n }, { dtype: x.dtype, size: batch * Math.min(m, n) }, { dtype: 'int32', size: QR_STATE_SIZE },
      { dtype: x.dtype, size: batch * t }, { dtype: x.dtype, size: batch * y },
    );
    const stageBuffers = [...outputs, temp(0), temp(1), temp(2), temp(3), temp(4), input];
    const launches: Launch[] = [
      { ...copyKernel(x.dtype, batch * m * n), buffers: [temp(0), input] },
      { ...zerosKernel('int32', QR_STATE_SIZE), buffers: [temp(2)] },
      ...qrSchedule(m, n, nb).map((stage) => ({ kernel: { ...kernel, cudaStage: { stage, nb } }, buffers: stageBuffers, params: [batch, m, n] })),
    ];
    plan.launches.push(...launches);
    return plan;
  }
  // a temp of 0 elements still gets a buffer: the kernel's pointer arithmetic on it is never dereferenced
  for (const size of [m * n, Math.min(m, n)]) plan.temps.push({ dtype: x.dtype, size: Math.max(1, batch * size) });
  plan.launches.push({ kernel, buffers: [...outputs, temp(0), temp(1), input], params: [batch, m, n] });
  return plan;
}
