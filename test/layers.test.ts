// The layering of lib/ (../shared/DESIGN.md, "Layers"): data flows user code
// → trace → transform → compile → run, and imports point down only. This
// test reads every import of lib/**/*.ts with the TypeScript parser (static
// `import ... from`, `export ... from`, side-effect imports, `import()`
// calls and `import('...')` types) and fails, naming the file and the
// import, when a layer imports one it may not. The table below is the
// whole set of allowed edges between layers; it is acyclic (checked too),
// so no import circle can pass through two layers.
//
// Type-only imports count: tsc erases them, so they make no module-loading
// circle, but they still couple a lower layer to a higher one's types. The
// few core needs (it holds backends and devices, and control-flow params
// hold jaxprs, whose types live above it) are listed one by one in
// TYPE_ONLY_EXCEPTIONS with the reason; any other upward type import fails.
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as TS from 'typescript';

// typescript is a dev dependency: a GPU host's packed node_modules leaves it out, and the test says so
const loaded = await import('typescript').then((m) => ((m as unknown as { default?: typeof TS }).default ?? m) as typeof TS, () => null);
const ts = loaded as typeof TS;

/** The repository root (this file runs as dist/test/layers.test.js). */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const libDir = path.join(root, 'lib');

type Layer =
  | 'core' | 'trace' | 'compiler' | 'profiler' | 'runtime' | 'sharding' | 'transforms' | 'reference'
  | 'lax' | 'numpy' | 'random' | 'nn' | 'optax' | 'tree' | 'index' | 'types';

/** Where each layer lives: a folder of lib/ or a file at its top. */
const HOMES: Record<string, Layer> = {
  core: 'core',
  trace: 'trace',
  compiler: 'compiler',
  'profiler.ts': 'profiler',
  runtime: 'runtime',
  sharding: 'sharding',
  transforms: 'transforms',
  reference: 'reference',
  lax: 'lax',
  numpy: 'numpy',
  random: 'random',
  nn: 'nn',
  optax: 'optax',
  'tree.ts': 'tree',
  'index.ts': 'index',
  types: 'types',
};

/**
 * The layers each layer may import (besides its own files), bottom to top,
 * and why. A layer not named in a row is out of bounds for it.
 */
const ALLOWED: Record<Layer, { imports: readonly Layer[]; why: string }> = {
  core: { imports: [], why: 'Array, dtypes, shapes, pytrees, errors, the primitive table and bind; the trace stack, the eager interpreter and the devices are installed into it from above' },
  trace: { imports: ['core'], why: 'tracers, the trace stack and jaxprs over core primitives' },
  compiler: { imports: ['core', 'trace'], why: 'jaxpr → plans and kernel sources; it runs nothing' },
  profiler: { imports: ['core'], why: 'records the steps the program runners take' },
  runtime: {
    imports: ['core', 'trace', 'compiler', 'profiler'],
    why: 'runs plans the compiler makes (compileProgram, execute); eager control flow stages its one equation as a jaxpr (trace) and compiles it',
  },
  sharding: { imports: ['core', 'runtime'], why: 'shardings name runtime devices; installs how an Array names its sharding' },
  transforms: {
    imports: ['core', 'trace', 'compiler', 'runtime', 'sharding'],
    why: 'interpreters over jaxprs; jit lowers, compiles (compiler) and runs (runtime) programs, with shardings',
  },
  reference: { imports: ['core', 'trace'], why: "the float64 reference interpreter of primitives and jaxprs (the tests' oracle)" },
  lax: {
    imports: ['core', 'trace', 'runtime', 'transforms'],
    why: 'wrappers over primitives; control flow traces user functions to jaxprs (trace); loading lax loads the runtime, which installs the eager interpreter into core; custom_jvp and shared linalg helpers come from transforms (as jax.lax imports custom_derivatives)',
  },
  numpy: { imports: ['core', 'lax', 'transforms'], why: 'jnp over lax; custom_jvp from transforms, as jax.numpy uses jax.custom_jvp' },
  random: { imports: ['core', 'lax', 'numpy', 'transforms'], why: 'jax.random over lax and jnp; its samplers are jitted' },
  nn: { imports: ['core', 'lax', 'numpy', 'random'], why: 'jax.nn functions and initializers (which draw from random)' },
  optax: { imports: ['core', 'lax', 'numpy'], why: 'optimizers over jnp' },
  tree: { imports: ['core'], why: 'jax.tree re-exports core pytrees' },
  index: {
    imports: ['core', 'trace', 'compiler', 'profiler', 'runtime', 'sharding', 'transforms', 'lax', 'numpy', 'random', 'nn', 'optax', 'tree'],
    why: "the package's entry: the public API of every layer",
  },
  types: { imports: [], why: 'ambient declarations for untyped packages' },
};

/** Upward type-only imports core cannot do without; each names the file, the module it imports and why. */
const TYPE_ONLY_EXCEPTIONS: readonly { file: string; imports: string; why: string }[] = [
  { file: 'core/array.ts', imports: 'runtime/backend.ts', why: "an Array's storage belongs to a Backend (the hooks runtime/device.ts installs map it to a Device)" },
  { file: 'core/array.ts', imports: 'runtime/device.ts', why: 'Array.device returns a Device, found through the device hooks the runtime installs' },
  { file: 'core/array.ts', imports: 'sharding/index.ts', why: 'Array.sharding returns a SingleDeviceSharding, made by the hook lib/sharding installs' },
  { file: 'core/memory.ts', imports: 'runtime/backend.ts', why: 'Storage holds a Backend and its DeviceBuffer, and frees the buffer through it' },
  { file: 'core/primitives.ts', imports: 'trace/jaxpr.ts', why: "the params of scan, while, cond and checkpoint hold ClosedJaxprs (JAX keeps Jaxpr in core; jaxon's lives in lib/trace)" },
];

interface Import {
  /** lib-relative path of the importing file */
  file: string;
  line: number;
  specifier: string;
  typeOnly: boolean;
  /** lib-relative path of the imported file, or null when it is outside lib/ */
  target: string | null;
}

function listSources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return listSources(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** The .ts file a relative specifier of `from` names ('./x.js' is './x.ts'). */
function resolve(from: string, specifier: string): string {
  const target = path.resolve(path.dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), target.replace(/\.js$/, '.d.ts'), `${target}.ts`, path.join(target, 'index.ts')]) {
    if (fs.existsSync(candidate)) return candidate;
  }
  return target;
}

/** Whether an import declaration brings in types only: `import type`, or every named binding marked `type`. */
function importIsTypeOnly(node: TS.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function exportIsTypeOnly(node: TS.ExportDeclaration): boolean {
  if (node.isTypeOnly) return true;
  const clause = node.exportClause;
  return clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

/** Every import of one source file that names another file by a relative path. */
function importsOf(fullPath: string): Import[] {
  const text = fs.readFileSync(fullPath, 'utf8');
  const source = ts.createSourceFile(fullPath, text, ts.ScriptTarget.Latest, true);
  const file = path.relative(libDir, fullPath).split(path.sep).join('/');
  const found: Import[] = [];
  const add = (node: TS.Node, literal: TS.Expression | undefined, typeOnly: boolean) => {
    if (!literal || !ts.isStringLiteralLike(literal) || !literal.text.startsWith('.')) return;
    const target = resolve(fullPath, literal.text);
    const relative = path.relative(libDir, target);
    found.push({
      file,
      line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
      specifier: literal.text,
      typeOnly,
      target: relative.startsWith('..') || path.isAbsolute(relative) ? null : relative.split(path.sep).join('/'),
    });
  };
  const visit = (node: TS.Node): void => {
    if (ts.isImportDeclaration(node)) add(node, node.moduleSpecifier, importIsTypeOnly(node));
    else if (ts.isExportDeclaration(node)) add(node, node.moduleSpecifier, exportIsTypeOnly(node));
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node, node.argument.literal, true);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node, node.arguments[0], false);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add(node, node.moduleReference.expression, node.isTypeOnly);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The layer of a lib-relative path, or undefined when it is in none. */
function layerOf(file: string): Layer | undefined {
  return HOMES[file.split('/')[0]!];
}

const sources = listSources(libDir);
const imports = loaded ? sources.flatMap(importsOf) : [];

if (!loaded) {
  test('the layering of lib/ (skipped)', (t) => {
    t.log('skipped: the typescript package is not installed here (a packed GPU host); the layering is checked where it is');
    t.pass();
  });
}
const layersTest = loaded ? test : test.skip;

layersTest('every file of lib/ belongs to a layer', (t) => {
  const homeless = sources.map((s) => path.relative(libDir, s).split(path.sep).join('/')).filter((f) => layerOf(f) === undefined);
  t.deepEqual(homeless, [], `files in no layer (add their folder to HOMES and ALLOWED in test/layers.test.ts): ${homeless.join(', ')}`);
  t.true(sources.length > 50, `found only ${sources.length} sources under ${libDir}`);
});

layersTest('the table of allowed imports has no circle, so no import circle can pass through two layers', (t) => {
  const state = new Map<Layer, 'visiting' | 'done'>();
  const circle = (layer: Layer, trail: Layer[]): Layer[] | null => {
    if (state.get(layer) === 'done') return null;
    if (state.get(layer) === 'visiting') return [...trail.slice(trail.indexOf(layer)), layer];
    state.set(layer, 'visiting');
    for (const next of ALLOWED[layer].imports) {
      const found = circle(next, [...trail, layer]);
      if (found) return found;
    }
    state.set(layer, 'done');
    return null;
  };
  for (const layer of Object.keys(ALLOWED) as Layer[]) {
    const found = circle(layer, []);
    t.is(found, null, `the allowed imports form a circle: ${found?.join(' → ')}`);
  }
  t.deepEqual(ALLOWED.core.imports, [], 'core imports nothing above it');
  t.false(ALLOWED.compiler.imports.includes('runtime'), 'the compiler emits plans and kernel sources and runs nothing');
});

layersTest('no layer imports one above it', (t) => {
  const excepted = new Set(TYPE_ONLY_EXCEPTIONS.map((e) => `${e.file} → ${e.imports}`));
  const violations: string[] = [];
  for (const imp of imports) {
    const at = `lib/${imp.file}:${imp.line}: ${imp.typeOnly ? 'type-only ' : ''}import '${imp.specifier}'`;
    if (imp.target === null) {
      violations.push(`${at} reaches outside lib/`);
      continue;
    }
    const from = layerOf(imp.file);
    const to = layerOf(imp.target);
    if (from === undefined || to === undefined) {
      violations.push(`${at}: lib/${from === undefined ? imp.file : imp.target} is in no layer`);
      continue;
    }
    if (from === to || ALLOWED[from].imports.includes(to)) continue;
    if (imp.typeOnly && excepted.has(`${imp.file} → ${imp.target}`)) continue;
    violations.push(`${at}: ${from} may not import ${to} (${from} may import: ${ALLOWED[from].imports.join(', ') || 'nothing above it'})`);
  }
  t.deepEqual(violations, [], `imports against the layering (../shared/DESIGN.md, "Layers"):\n${violations.join('\n')}`);
});

layersTest('every type-only exception is still needed, and still type-only', (t) => {
  for (const e of TYPE_ONLY_EXCEPTIONS) {
    const uses = imports.filter((imp) => imp.file === e.file && imp.target === e.imports);
    t.true(uses.length > 0, `TYPE_ONLY_EXCEPTIONS lists lib/${e.file} → lib/${e.imports}, which is no longer imported: remove the entry`);
    for (const imp of uses) t.true(imp.typeOnly, `lib/${e.file}:${imp.line} imports '${imp.specifier}' as a value; only its types are excepted`);
  }
});

layersTest('loading an API module alone installs the runtime into core: eager ops, devices and traced ops work without lib/index', (t) => {
  const numpy = path.join(root, 'dist', 'lib', 'numpy', 'index.js');
  const vmap = path.join(root, 'dist', 'lib', 'transforms', 'vmap.js');
  const script = [
    `import * as jnp from ${JSON.stringify(numpy)};`,
    `import { vmap } from ${JSON.stringify(vmap)};`,
    'const x = jnp.array([1, 2, 3]);',
    'const y = jnp.multiply(x, 2);',
    "const z = vmap((v) => jnp.add(v, 1))(jnp.array([[1, 2], [3, 4]]));",
    "console.log(JSON.stringify([y.tolistSync(), z.tolistSync(), String(y.device).endsWith('(id=0)')]));",
  ].join('\n');
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' }).trim();
  t.deepEqual(JSON.parse(out.split('\n').at(-1)!), [[2, 4, 6], [[2, 3], [4, 5]], true]);
});
