// Which C compiler the CPU backend runs (issue 19): $JAXON_CC, else $CC, else
// the first of cc, gcc, clang on PATH. Without one, jaxon still imports and
// the CUDA backend still works; environmentInfo() and the first kernel
// compile say, in one line, which package to install.
import fs from 'node:fs';
import path from 'node:path';

/** The compilers looked for on PATH, in order, when neither $JAXON_CC nor $CC names one. */
export const C_COMPILER_NAMES = ['cc', 'gcc', 'clang'] as const;

export interface CCompilerChoice {
  /** The command line to run (a name or path, possibly with leading arguments); null when none was found. */
  readonly command: string | null;
  /** Where it came from: '$JAXON_CC', '$CC' or 'PATH'. */
  readonly from: '$JAXON_CC' | '$CC' | 'PATH' | null;
}

const installHint =
  process.platform === 'darwin'
    ? 'install the Xcode Command Line Tools (xcode-select --install)'
    : 'install gcc (apt-get install gcc, dnf install gcc, apk add gcc musl-dev)';

/** One line saying that no compiler was found and what to install. */
export function missingCompilerMessage(): string {
  return (
    `no C compiler found (looked at $JAXON_CC, $CC and ${C_COMPILER_NAMES.join(', ')} on PATH), ` +
    `which jaxon's CPU backend needs to compile its kernels: ${installHint}, or set JAXON_CC to one`
  );
}

let memo: { key: string; choice: CCompilerChoice } | undefined;

/** The compiler to use now; the environment is read on each call (tests change it). */
export function chooseCCompiler(): CCompilerChoice {
  const configured = process.env['JAXON_CC']?.trim();
  if (configured) return { command: configured, from: '$JAXON_CC' };
  const cc = process.env['CC']?.trim();
  if (cc) return { command: cc, from: '$CC' };
  const searchPath = process.env['PATH'] ?? '';
  if (memo?.key === searchPath) return memo.choice;
  const found = C_COMPILER_NAMES.find((name) => onPath(name, searchPath));
  const choice: CCompilerChoice = found ? { command: found, from: 'PATH' } : { command: null, from: null };
  memo = { key: searchPath, choice };
  return choice;
}

function onPath(name: string, searchPath: string): boolean {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return true;
    } catch {
      // Not in this folder.
    }
  }
  return false;
}
