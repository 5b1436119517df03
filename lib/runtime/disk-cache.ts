// Helpers shared by the on-disk kernel caches (kernel-cache.ts for C kernels,
// nvrtc-cache.ts for CUDA kernels): where the cache lives, jaxon's version
// (part of every key), sha256 checksums, and atomic writes. Several processes
// may fill one cache at once, so every file is written under a unique
// temporary name and renamed into place: readers see no file or a whole one.
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

let jaxonVersionMemo: string | undefined;

/** Where compiled kernels live: $JAXON_CACHE_DIR (read on each call), else ~/.cache/jaxon/kernels. */
export function kernelCacheDir(): string {
  const fromEnv = process.env.JAXON_CACHE_DIR;
  if (fromEnv && fromEnv.trim()) return path.resolve(fromEnv);
  return path.join(os.homedir(), '.cache', 'jaxon', 'kernels');
}

let packageRootMemo: string | null | undefined;

/** The folder of jaxon's own package.json, found by walking up from this file (dist/lib/runtime when built); null if none. */
export function jaxonPackageRoot(): string | null {
  if (packageRootMemo !== undefined) return packageRootMemo;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (manifest.name === 'jaxon' && typeof manifest.version === 'string') {
        packageRootMemo = dir;
        jaxonVersionMemo = manifest.version;
        return dir;
      }
    } catch {
      // No (readable) package.json here; keep walking up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  packageRootMemo = null;
  return null;
}

/** jaxon's version from its own package.json, so upgrading jaxon invalidates old kernels. */
export function jaxonVersion(): string {
  if (jaxonVersionMemo !== undefined) return jaxonVersionMemo;
  jaxonPackageRoot();
  jaxonVersionMemo ??= 'unknown';
  return jaxonVersionMemo;
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A name beside `file` that no other process or call uses. */
export function temporaryName(file: string): string {
  return `${file}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
}

export function writeFileAtomic(file: string, data: string | Uint8Array): void {
  const temporary = temporaryName(file);
  try {
    fs.writeFileSync(temporary, data);
    fs.renameSync(temporary, file);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}

/**
 * Renames `from` to `to` atomically; a temporary name in `to`'s directory is
 * used because `from` may be on another filesystem (EXDEV).
 */
export function moveIntoPlace(from: string, to: string): void {
  const temporary = temporaryName(to);
  try {
    try {
      fs.renameSync(from, temporary);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
      fs.copyFileSync(from, temporary);
      fs.rmSync(from, { force: true });
    }
    fs.renameSync(temporary, to);
  } catch (error) {
    fs.rmSync(temporary, { force: true });
    throw error;
  }
}
