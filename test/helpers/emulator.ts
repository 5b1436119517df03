// What the emulated GPU's run of the suite leaves out. Its kernels are
// specialized to their shapes and each is compiled by the host's C++ compiler
// (cuda/emulator/nvrtc.cc), so a sweep over many shapes, dtypes or random
// cases costs a compile per case there and CI (2 cores, 30 minutes) cannot
// run every sweep in full on both platforms. The CPU runs every case; the
// emulated GPU runs the subset each file chooses with these helpers, and a real
// GPU (npm run test:gpu) or JAXON_TEST_FULL=1 runs everything.

/** True on the emulated GPU's run of the suite unless JAXON_TEST_FULL=1: sweeps run their subset. */
export const emulatorSubset =
  process.env['JAXON_TEST_PLATFORM'] === 'cuda' && process.env['JAXON_CUDA_EMULATOR'] === '1' && process.env['JAXON_TEST_FULL'] !== '1';

/** `items` where the full sweep runs; on the emulator's subset the first `first` and then every `every`-th. */
export function sweep<T>(items: readonly T[], every: number, first = 1): T[] {
  if (!emulatorSubset) return [...items];
  return items.filter((_, i) => i < first || i % every === 0);
}
