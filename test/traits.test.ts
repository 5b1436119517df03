// One table of primitive traits (issue 14, item 1): the sets the layers kept
// by hand are derived from lib/core/traits.ts, and a primitive without traits
// is a compile error.
import test from 'ava';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type * as TS from 'typescript';
import { TRAITS, primitivesWith } from '../lib/core/traits.js';
import { abstractEval } from '../lib/core/primitives.js';

// typescript is a dev dependency (a packed GPU host has none): the type-check test skips without it
const ts = await import('typescript').then((m) => ((m as unknown as { default?: typeof TS }).default ?? m) as typeof TS, () => null);
const sorted = (s: ReadonlySet<string>) => [...s].sort();

test('the derived sets are the ones the layers kept by hand (cost model, fusion, CUDA renderer, dtype checks)', (t) => {
  t.deepEqual(sorted(primitivesWith('xlaTranscendental')), ['atan2', 'cbrt', 'cos', 'erf', 'exp', 'expm1', 'log', 'log1p', 'logistic', 'pow', 'rsqrt', 'sin', 'sqrt', 'tan', 'tanh']);
  t.deepEqual(sorted(primitivesWith('expensive')), ['acos', 'acosh', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'cbrt', 'cos', 'cosh', 'div', 'erf', 'exp', 'exp2', 'expm1', 'log', 'log1p', 'logistic', 'pow', 'rem', 'rsqrt', 'sin', 'sinh', 'sqrt', 'tan', 'tanh']);
  t.deepEqual(sorted(primitivesWith('libmCall')), ['acos', 'acosh', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'cbrt', 'cos', 'cosh', 'erf', 'exp', 'exp2', 'expm1', 'log', 'log1p', 'logistic', 'nextafter', 'pow', 'rem', 'sin', 'sinh', 'tan', 'tanh']);
  t.deepEqual(sorted(primitivesWith('intOrBoolOnly')), ['and', 'not', 'or', 'xor']);
  t.true(primitivesWith('floatOnly').has('sqrt') && primitivesWith('floatOnly').has('reduce_precision') && !primitivesWith('floatOnly').has('pow'));
  // every primitive with an abstract-eval rule has traits, and nothing else does
  t.deepEqual(Object.keys(TRAITS).sort(), Object.keys(abstractEval).sort());
});


(ts ? test : test.skip)('a new primitive without traits or rules fails to type-check (traits, abstract eval, lowering, cost, jvp, transpose, batching, the reference interpreter)', (t) => {
  t.timeout(120_000);
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const roots = ['test/fixtures/throwaway-primitive/augment.ts', 'lib/index.ts', 'lib/reference/interpreter.ts'];
  const program = ts!.createProgram(roots.map((r) => path.join(root, r)), {
    target: ts!.ScriptTarget.ES2022, module: ts!.ModuleKind.NodeNext, moduleResolution: ts!.ModuleResolutionKind.NodeNext, strict: true, noEmit: true, skipLibCheck: true,
  });
  const errors = ts!.getPreEmitDiagnostics(program).map((d) => `${d.file ? path.relative(root, d.file.fileName) : ''}: ${ts!.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  // the traits table, and every other rule table typed over the primitives, now miss it
  const tables = [
    'lib/core/traits.ts', 'lib/core/primitives.ts', 'lib/compiler/lower.ts', 'lib/compiler/cost.ts', 'lib/transforms/jvp-rules.ts',
    'lib/transforms/transpose.ts', 'lib/transforms/batching-rules.ts', 'lib/reference/interpreter.ts',
  ];
  for (const file of tables) {
    t.true(errors.some((e) => e.startsWith(file) && /Property 'throwaway' is missing/.test(e)), `${file}:\n${errors.join('\n')}`);
  }
});
