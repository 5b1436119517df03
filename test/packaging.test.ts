// The published package, as a new user gets it (issue 19): `npm pack` (whose
// prepack compiles dist/ and copies the addon into prebuilds/), then an
// offline `npm install` of the tarball into a fresh project with npm's
// defaults (npm 11 does not run the install script), then a TypeScript file
// using jnp, jit, grad and optax, type-checked by tsc against the installed
// .d.ts with moduleResolution node16 and bundler, and run with node on the
// CPU (and once on the emulated GPU). It also keeps the tarball under the
// size the README states.
import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The limit the README's Install section states. */
const maxTarballBytes = 1_000_000;

// A user's environment: none of the npm_* variables `npm test` sets, none of jaxon's settings.
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.toLowerCase().startsWith('npm_') && !key.startsWith('JAXON_')) env[key] = value;
  }
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const result = spawnSync(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
  return `${result.stdout}${result.stderr}`;
}

const tsconfig = (options: Record<string, unknown>) =>
  JSON.stringify({ compilerOptions: { target: 'es2022', strict: true, skipLibCheck: false, types: [], ...options }, files: ['consumer.ts'] });

test('npm pack, then npm install of the tarball offline without install scripts, gives a package that type-checks and runs jnp, jit, grad and optax', (t) => {
  if (process.env['JAXON_TEST_PLATFORM'] === 'cuda') {
    t.log('skipped: the package is checked once, in the CPU run of the suite (npm run test:cpu)');
    t.pass();
    return;
  }
  const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
  if (npm.error || npm.status !== 0) {
    t.log(`skipped: npm is not on PATH (${npm.error?.message ?? npm.stderr.trim()})`);
    t.pass();
    return;
  }
  const started = performance.now();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-pack-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));

  // npm pack runs prepack: tsc (nothing to emit after `npm run build:ts`) and the prebuilds.
  run('npm', ['pack', '--pack-destination', work], root, userEnv());
  const tarballs = fs.readdirSync(work).filter((name) => name.endsWith('.tgz'));
  t.is(tarballs.length, 1, `npm pack made ${tarballs.join(', ') || 'no tarball'}`);
  const tarball = path.join(work, tarballs[0]!);
  const bytes = fs.statSync(tarball).size;
  t.true(bytes < maxTarballBytes, `the tarball has ${bytes} bytes, over the README's limit of ${maxTarballBytes}`);

  const files = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean).map((name) => name.replace(/^package\//, ''));
  const prebuild = `prebuilds/${process.platform}-${process.arch}`;
  for (const needed of [
    'package.json', 'README.md', 'LICENSE', 'binding.gyp', 'scripts/install.mjs',
    'dist/lib/index.js', 'dist/lib/index.d.ts', 'dist/lib/optax/index.js', 'dist/lib/optax/index.d.ts',
    'cuda/addon.c', 'cuda/kernels/jaxon_c.h', 'cuda/kernels/jaxon_common.h', 'cuda/kernels/jaxon_gemm.h', 'cuda/kernels/jaxon_math.h', 'cuda/kernels/jaxon_cuda.h',
    'cuda/kernels/jaxon_mma.h', 'cuda/emulator/driver.cc', 'cuda/emulator/jaxon_emu.h', 'cuda/emulator/jaxon_emu_tensor.h',
    `${prebuild}/jaxon_native.node`, `${prebuild}/jaxon_cuda_emulator.node`,
  ]) {
    t.true(files.includes(needed), `the tarball lacks ${needed}`);
  }
  const unwanted = files.filter((name) => /^(test|bench|examples|lib|dist\/(test|bench|examples))\/|fixtures|\.map$|\.tsbuildinfo$|^build\//.test(name));
  t.deepEqual(unwanted, [], 'the tarball ships tests, fixtures, sources maps or build output');

  const project = path.join(work, 'project');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'jaxon-user', version: '1.0.0', private: true, type: 'module' }));
  const installLog = run('npm', ['install', tarball, '--offline', '--no-audit', '--no-fund'], project, userEnv());
  t.log(`npm ${npm.stdout.trim()} install: ${installLog.trim().split('\n').join(' | ')}`);
  const installed = path.join(project, 'node_modules', 'jaxon');
  t.false(fs.existsSync(path.join(installed, 'build')), 'something built the addon at install time; the prebuild should be all it needs');
  t.deepEqual(fs.readdirSync(path.join(project, 'node_modules')).filter((name) => !name.startsWith('.')), ['jaxon'], 'jaxon has no dependencies');

  // Type-check against the installed .d.ts, as node16 and as bundler projects.
  fs.copyFileSync(path.join(root, 'test', 'fixtures', 'packaging', 'consumer.ts'), path.join(project, 'consumer.ts'));
  fs.writeFileSync(path.join(project, 'tsconfig.node16.json'), tsconfig({ module: 'node16', moduleResolution: 'node16', outDir: 'out' }));
  fs.writeFileSync(path.join(project, 'tsconfig.bundler.json'), tsconfig({ module: 'esnext', moduleResolution: 'bundler', noEmit: true }));
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const config of ['tsconfig.node16.json', 'tsconfig.bundler.json']) {
    t.notThrows(() => run(process.execPath, [tsc, '-p', config], project, userEnv()), `tsc -p ${config}`);
  }

  // Run it on the CPU, compiling its kernels afresh (their headers come from the installed package).
  const env = userEnv({ JAXON_PLATFORMS: 'cpu', JAXON_CACHE_DIR: path.join(work, 'kernels') });
  const output = run(process.execPath, [path.join('out', 'consumer.js')], project, env).trim().split('\n');
  const result = JSON.parse(output[output.length - 1]!) as Record<string, number | string>;
  t.is(result['platform'], 'cpu');
  t.is(result['addon'], `${path.join(installed, prebuild, 'jaxon_native.node')} (prebuilt)`);
  const x = Array.from({ length: 32 }, (_, i) => -1 + (2 * i) / 31);
  const expectedGradW = -6 * (x.reduce((sum, v) => sum + v * v, 0) / 32);
  t.true(Math.abs((result['gradW'] as number) - expectedGradW) < 1e-4, `grad: ${result['gradW']} vs ${expectedGradW}`);
  t.true((result['lastLoss'] as number) < 1e-6, `adam did not fit y = 3x - 1: loss ${result['firstLoss']} -> ${result['lastLoss']}`);
  t.true(Math.abs((result['w'] as number) - 3) < 1e-3 && Math.abs((result['b'] as number) + 1) < 1e-3, `w ${result['w']}, b ${result['b']}`);

  // The emulated GPU's library is found beside the prebuilt addon, and its headers in the installed package.
  const emulated = run(process.execPath, [path.join('out', 'consumer.js')], project, { ...env, JAXON_PLATFORMS: 'cuda', JAXON_CUDA_EMULATOR: '1' }).trim().split('\n');
  const onGpu = JSON.parse(emulated[emulated.length - 1]!) as Record<string, number | string>;
  t.is(onGpu['platform'], 'cuda');
  t.true(Math.abs((onGpu['gradW'] as number) - expectedGradW) < 1e-4 && (onGpu['lastLoss'] as number) < 1e-6, JSON.stringify(onGpu));

  // Without a loadable binary (and with the first-use build turned off) the error is one line naming the command.
  fs.renameSync(path.join(installed, 'prebuilds'), path.join(installed, 'prebuilds-hidden'));
  const failed = spawnSync(process.execPath, ['--input-type=module', '-e', "import * as jax from 'jaxon'; console.log(jax.environmentInfo().addon)"], {
    cwd: project,
    env: { ...env, JAXON_BUILD_ADDON: '0' },
    encoding: 'utf8',
  });
  const line = failed.stdout.trim();
  t.false(line.includes('\n'), line);
  t.regex(line, /^jaxon: the native addon jaxon_native is not built for .* run `cd .* rebuild( --nodedir=\S+)?` \(needs python3 and a C\/C\+\+ compiler\)$/);
  t.log(`packed, installed, type-checked twice and ran in ${((performance.now() - started) / 1000).toFixed(1)} s; tarball ${bytes} bytes`);
});

test('without a C compiler, environmentInfo and the first kernel compile say in one line what to install', (t) => {
  const script =
    "import * as jax from './dist/lib/index.js'; console.log(jax.environmentInfo().compiler);" +
    'try { jax.numpy.add(jax.numpy.array([1, 2]), 1).dataSync(); console.log("compiled"); } catch (error) { console.log(error.message); }';
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    env: userEnv({ PATH: '', JAXON_PLATFORMS: 'cpu', JAXON_CACHE_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'jaxon-nocc-')) }),
    encoding: 'utf8',
  });
  const [info, compile] = output.trim().split('\n');
  t.regex(info!, /^no C compiler found \(looked at \$JAXON_CC, \$CC and cc, gcc, clang on PATH\).*install (gcc|the Xcode Command Line Tools)/);
  t.is(compile, `jaxon: ${info}`);
});

test('JAXON_CC chooses the C compiler, before $CC', (t) => {
  const script = "import * as jax from './dist/lib/index.js'; console.log(jax.environmentInfo().compiler)";
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    env: userEnv({ JAXON_CC: 'gcc -O2', CC: 'clang', JAXON_PLATFORMS: 'cpu' }),
    encoding: 'utf8',
  });
  t.is(output.trim(), 'gcc -O2 (from $JAXON_CC)');
});

test('in the repository, the local build (build/Release) is loaded, never a prebuild left by npm pack', (t) => {
  const script = "import * as jax from './dist/lib/index.js'; console.log(jax.environmentInfo().addon)";
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, env: userEnv({ JAXON_PLATFORMS: 'cpu' }), encoding: 'utf8' });
  t.is(output.trim(), `${path.join(root, 'build', 'Release', 'jaxon_native.node')} (local build)`);
});
