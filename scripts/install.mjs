// npm's install step for jaxon (issue 19). An installed package carries a
// prebuilt addon (prebuilds/<platform>-<arch>/); when it loads here and there
// is no local build to refresh, nothing needs building. Otherwise (a checkout,
// which has lib/ and must never run a stale prebuild; another platform) it
// builds build/Release with node-gyp, which npm puts on the PATH of its scripts. npm 11 may not run this script at all; then
// lib/runtime/addon-files.ts builds on first use or says what to run.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const prebuild = path.join(root, 'prebuilds', `${process.platform}-${process.arch}`, 'jaxon_native.node');

function prebuildLoads() {
  const checkout = fs.existsSync(path.join(root, 'lib'));
  if (checkout || fs.existsSync(path.join(root, 'build')) || !fs.existsSync(prebuild)) return false;
  try {
    createRequire(import.meta.url)(prebuild);
    return true;
  } catch (error) {
    console.error(`jaxon: the prebuilt addon ${prebuild} does not load here (${error.message.split('\n')[0]}); building one`);
    return false;
  }
}

if (prebuildLoads()) {
  console.error(`jaxon: using the prebuilt addon ${path.relative(root, prebuild)}`);
} else {
  const result = spawnSync('node-gyp', ['rebuild'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (result.error) {
    console.error(`jaxon: cannot run node-gyp (${result.error.message}); run \`npx node-gyp rebuild\` in ${root}`);
    process.exit(1);
  }
  process.exit(result.status ?? 1);
}
