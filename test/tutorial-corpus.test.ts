// Issue 13: the tutorial corpus. Snippets ported from JAX's tutorials (Quickstart,
// JAX 101, the Sharp Bits, the Autodiff Cookbook, control flow, pytrees, random
// numbers) and from jnp/lax/nn docstrings, each asserting the output printed in
// that text (test/corpus/). A `failing` snippet records where jaxon differs from
// JAX's printed value; a `todo` names what jaxon does not have yet.
import test from 'ava';
import type { Snippet } from './corpus/snippet.js';
import { snippets as quickstart } from './corpus/quickstart.js';
import { snippets as sharpBits } from './corpus/sharp-bits.js';
import { snippets as jitAndControlFlow } from './corpus/jit-and-control-flow.js';
import { snippets as vectorization } from './corpus/vectorization.js';
import { snippets as autodiff } from './corpus/autodiff.js';
import { snippets as pytrees } from './corpus/pytrees.js';
import { snippets as random } from './corpus/random.js';
import { snippets as docstrings } from './corpus/docstrings.js';
import { config } from '../lib/core/config.js';

// Float32 dots at float32 precision, to compare with the values JAX's documentation prints (computed on a CPU): a GPU's default rounds their operands to tf32, as
// JAX's does (jax.config's jax_default_matmul_precision, as JAX's own tests set it).
config.update('jaxDefaultMatmulPrecision', 'float32');

const corpus: Snippet[] = [...quickstart, ...sharpBits, ...jitAndControlFlow, ...vectorization, ...autodiff, ...pytrees, ...random, ...docstrings];

for (const { source, title, kind, run, serial } of corpus) {
  const name = `${source} › ${title}`;
  if (kind === 'todo') test.todo(name);
  else if (kind === 'failing') test.failing(name, run!);
  else if (serial) test.serial(name, run!);
  else test(name, run!);
}

test('the corpus holds at least 120 snippets with unique names', (t) => {
  t.true(corpus.length >= 120, `${corpus.length} snippets`);
  const names = corpus.map((s) => `${s.source} › ${s.title}`);
  t.is(new Set(names).size, names.length);
});
