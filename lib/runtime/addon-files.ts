// Finds and loads jaxon's native addon without the `bindings` package (issue
// 19), by node-gyp-build's convention: a local build (build/Release, then
// build/Debug: a checkout, or an install whose install script ran) wins over
// the prebuilt binary shipped in the package (prebuilds/<platform>-<arch>/),
// so a rebuilt addon is never shadowed by a stale prebuild. N-API is
// ABI-stable, so one prebuild serves every Node from 20 on. Where nothing
// loads (another platform, and npm 11 blocked the install script), the first
// use builds it once with npm's own node-gyp, or fails in one line naming the
// command to run. The emulated GPU's library is found beside the addon.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { jaxonPackageRoot } from './disk-cache.js';

/** The folder of prebuilt binaries for this machine, relative to the package root. */
export const prebuildFolder = (): string => path.join('prebuilds', `${process.platform}-${process.arch}`);

/** Where the addon `name`.node may be, best first, relative to the package root. */
export function addonCandidates(name: string): string[] {
  return [path.join('build', 'Release'), path.join('build', 'Debug'), prebuildFolder()].map((dir) => path.join(dir, `${name}.node`));
}

export interface LoadedAddon {
  readonly exports: unknown;
  /** The file loaded (absolute). */
  readonly file: string;
  /** 'local build', 'prebuilt' or 'built on first use'. */
  readonly kind: string;
}

const require = createRequire(import.meta.url);

/** Loads the addon `name`, building it once if no candidate loads; throws one line saying what to run. */
export function loadAddon(name: string): LoadedAddon {
  const root = jaxonPackageRoot();
  if (!root) throw new Error(`jaxon: cannot find jaxon's package folder (its package.json), which holds the native addon ${name}.node`);
  const failures: string[] = [];
  const tryLoad = (): LoadedAddon | undefined => {
    for (const relative of addonCandidates(name)) {
      const file = path.join(root, relative);
      if (!fs.existsSync(file)) continue;
      try {
        const kind = relative.startsWith('prebuilds') ? 'prebuilt' : 'local build';
        return { exports: require(file), file, kind };
      } catch (error) {
        failures.push(`${relative}: ${(error as Error).message.split('\n')[0]}`);
      }
    }
    return undefined;
  };
  const found = tryLoad();
  if (found) return found;
  const build = buildCommand(root);
  const disabled = ['0', 'false'].includes(process.env['JAXON_BUILD_ADDON'] ?? '');
  let buildFailure = disabled ? 'JAXON_BUILD_ADDON=0' : '';
  if (!disabled && build.nodeGyp) {
    process.stderr.write(`jaxon: no native addon loads for ${process.platform}-${process.arch}; building it once with \`${build.line}\`\n`);
    try {
      execFileSync(process.execPath, [build.nodeGyp, ...build.args], { cwd: root, stdio: ['ignore', 2, 2] });
      const built = tryLoad();
      if (built) return { ...built, kind: 'built on first use' };
      buildFailure = 'succeeded, but the result does not load';
    } catch (error) {
      buildFailure = `failed (${(error as Error).message.split('\n')[0]})`;
    }
  }
  const tried = failures.length ? `(${failures.join('; ')}) ` : `(no ${addonCandidates(name).join(', ')}) `;
  const built = !buildFailure ? '' : disabled ? `building it is disabled by ${buildFailure}; ` : `building it ${buildFailure}; `;
  throw new Error(
    `jaxon: the native addon ${name} is not built for ${process.platform}-${process.arch} ${tried}and ${built}` +
      `run \`${build.line}\` (needs python3 and a C/C++ compiler)`,
  );
}

// npm ships node-gyp: npm sets npm_config_node_gyp in scripts, and it lies beside npm's own files.
// Node's own headers (<prefix>/include/node) spare node-gyp a download, so the build works offline.
function buildCommand(root: string): { nodeGyp: string | null; args: string[]; line: string } {
  const candidates = [
    process.env['npm_config_node_gyp'],
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    path.join(path.dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
  ];
  try {
    candidates.push(createRequire(path.join(root, 'package.json')).resolve('node-gyp/bin/node-gyp.js'));
  } catch {
    // Not installed beside jaxon; npm's copy will do.
  }
  const nodeGyp = candidates.find((file): file is string => !!file && fs.existsSync(file)) ?? null;
  const quote = (text: string) => (/^[\w./@:=+-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`);
  const prefix = path.dirname(path.dirname(process.execPath));
  const nodedir = process.env['npm_config_nodedir'] || (fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) ? prefix : '');
  const args = ['rebuild', ...(nodedir ? [`--nodedir=${nodedir}`] : [])];
  const line = `cd ${quote(root)} && ${nodeGyp ? `node ${quote(nodeGyp)}` : 'npx node-gyp'} ${args.map(quote).join(' ')}`;
  return { nodeGyp, args, line };
}
