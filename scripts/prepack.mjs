// npm pack's prepack step (issue 19): compiles the TypeScript into dist/ and
// copies the addon built in build/Release into prebuilds/<platform>-<arch>/,
// where lib/runtime/addon-files.ts finds it in an installed package. The
// emulated GPU's library goes beside it, where the addon looks for it.
// prebuilds/ is ignored by git; the repository itself loads build/Release.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const binaries = ['jaxon_native.node', 'jaxon_cuda_emulator.node'];

execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', root], { stdio: 'inherit' });

const target = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`);
fs.mkdirSync(target, { recursive: true });
for (const name of binaries) {
  const built = path.join(root, 'build', 'Release', name);
  if (!fs.existsSync(built)) {
    console.error(`prepack: ${path.relative(root, built)} is missing; run \`npx node-gyp rebuild\` first`);
    process.exit(1);
  }
  // Copied under a temporary name and renamed, so a process loading the prebuild never sees half a file.
  const temporary = path.join(target, `.${name}.tmp-${process.pid}`);
  fs.copyFileSync(built, temporary);
  fs.renameSync(temporary, path.join(target, name));
}
console.error(`prepack: prebuilt ${binaries.join(', ')} into ${path.relative(root, target)}`);
