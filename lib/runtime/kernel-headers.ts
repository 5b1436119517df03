// The kernel preludes as real header files (cuda/kernels/*.h, issue 14):
// generated C kernels start with `#include "jaxon_c.h"` and CUDA kernels with
// `#include "jaxon_cuda.h"`; both include jaxon_common.h, the helpers written
// once for the two targets. The C compiler finds them through -I; NVRTC (and
// the emulated GPU's) gets them as in-memory headers. Their digest is part of
// every kernel cache key, so editing a header recompiles what used it.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { jaxonPackageRoot } from './disk-cache.js';

export interface KernelHeader {
  /** The name kernels #include. */
  readonly name: string;
  readonly content: string;
}

export const KERNEL_HEADER_NAMES = ['jaxon_common.h', 'jaxon_c.h', 'jaxon_gemm.h', 'jaxon_math.h', 'jaxon_cuda.h', 'jaxon_mma.h'] as const;

let memo: { dir: string; headers: KernelHeader[]; digest: string } | undefined;

function load(): NonNullable<typeof memo> {
  if (memo) return memo;
  const root = jaxonPackageRoot();
  if (!root) throw new Error("jaxon: cannot find jaxon's package folder (its package.json), which holds the kernel headers cuda/kernels/*.h");
  const dir = path.join(root, 'cuda', 'kernels');
  const headers = KERNEL_HEADER_NAMES.map((name) => {
    try {
      return { name, content: fs.readFileSync(path.join(dir, name), 'utf8') };
    } catch (error) {
      throw new Error(`jaxon: the kernel header ${path.join(dir, name)} cannot be read (${(error as Error).message}); reinstall jaxon`);
    }
  });
  const hash = createHash('sha256');
  for (const h of headers) hash.update(`${h.name}\0${h.content}\0`);
  memo = { dir, headers, digest: hash.digest('hex').slice(0, 16) };
  return memo;
}

/** The folder of the kernel headers, for the C compiler's -I. */
export const kernelHeaderDir = (): string => load().dir;

/** Every kernel header with its content, for NVRTC's in-memory headers. */
export const kernelHeaders = (): readonly KernelHeader[] => load().headers;

/** A hash of every kernel header; part of every kernel cache key. */
export const kernelHeadersDigest = (): string => load().digest;
