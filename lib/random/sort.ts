// A stable argsort of uint32 keys along the last axis, built from jnp/lax ops
// because jaxon has no sort primitive yet; random.permutation needs it for
// JAX's sort-based shuffle (lax.sort_key_val, which is stable). Two
// algorithms, chosen by size, both giving exactly the stable order:
//  - small arrays: each element's rank counted by comparing all pairs
//    (O(n²) work in a handful of ops: cheap to trace and fuse);
//  - larger ones: an LSD radix sort, 8 passes of 4-bit digits, each a
//    stable counting sort (one-hot digits, cumulative counts, a scatter):
//    O(16·n) memory and about a hundred ops whatever n is.
import type { Array } from '../core/array.js';
import { tidy } from '../core/memory.js';
import * as lax from '../lax/ops.js';
import * as jnp from '../numpy/index.js';

/** Up to this many pairwise comparisons (batch · n²), elements are ranked by comparing all pairs. */
const PAIRWISE_LIMIT = 1 << 20;

/** int32 indices that stably sort `keys` (uint32, shape [..., n]) along the last axis. */
export function stableArgsort(keys: Array, options: { algorithm?: 'pairwise' | 'radix' } = {}): Array {
  const n = keys.shape[keys.ndim - 1]!;
  if (n <= 1) return lax.broadcastedIota('int32', [...keys.shape], keys.ndim - 1);
  const algorithm = options.algorithm ?? ((keys.size / n) * n * n <= PAIRWISE_LIMIT ? 'pairwise' : 'radix');
  return algorithm === 'pairwise' ? argsortByRank(keys) : argsortRadix(keys);
}

/** Which element lands at each position, from each element's stable rank. */
function argsortByRank(keys: Array): Array {
  const last = keys.ndim - 1;
  const n = keys.shape[last]!;
  const ki = jnp.expandDims(keys, last + 1); // [..., n (i), 1]
  const kj = jnp.expandDims(keys, last); // [..., 1, n (j)]
  const jBeforeI = lax.lt(lax.broadcastedIota('int32', [n, n], 1), lax.broadcastedIota('int32', [n, n], 0));
  // element j goes before element i when its key is smaller, or equal and j comes first
  const before = jnp.logicalOr(jnp.less(kj, ki), jnp.logicalAnd(jnp.equal(kj, ki), jBeforeI));
  const rank = jnp.sum(before, { axis: -1, dtype: 'int32' }); // [..., n]
  // invert the permutation: position p holds the i whose rank is p
  const lands = jnp.equal(jnp.expandDims(rank, last + 1), lax.broadcastedIota('int32', [n], 0)); // [..., n (i), n (p)]
  const index = lax.broadcastedIota('int32', [n, 1], 0);
  return jnp.sum(jnp.where(lands, index, 0), { axis: -2, dtype: 'int32' });
}

const DIGIT_BITS = 4;
const RADIX = 1 << DIGIT_BITS;

function argsortRadix(keys: Array): Array {
  const n = keys.shape[keys.ndim - 1]!;
  const batch = keys.size / n;
  let k = lax.reshape(keys, [batch, n]);
  let order = lax.broadcastedIota('int32', [batch, n], 1);
  const rows = lax.broadcastedIota('int32', [batch, n, 1], 0);
  const digitValues = lax.broadcastedIota('int32', [batch, n, RADIX], 2);
  const dimensionNumbers = { updateWindowDims: [], insertedWindowDims: [0, 1], scatterDimsToOperandDims: [0, 1] };
  for (let shift = 0; shift < 32; shift += DIGIT_BITS) {
    const [nextK, nextOrder] = tidy(() => {
      const digit = lax.convertElementType(lax.bitwiseAnd(lax.div(k, 2 ** shift), RADIX - 1), 'int32');
      const onehot = lax.convertElementType(lax.eq(lax.broadcastInDim(digit, [batch, n, RADIX], [0, 1]), digitValues), 'int32');
      // counting sort: an element goes after every smaller digit and every equal digit before it
      const seen = lax.cumsum(onehot, { axis: 1 });
      const totals = lax.sliceInDim(seen, n - 1, n, 1, 1); // [batch, 1, RADIX]
      const starts = lax.sub(lax.cumsum(totals, { axis: 2 }), totals);
      const slot = jnp.add(lax.sub(seen, 1), starts);
      const destination = lax.reduceSum(lax.mul(onehot, slot), [2]);
      const indices = lax.concatenate([rows, lax.reshape(destination, [batch, n, 1])], 2);
      return [
        lax.scatter(jnp.zerosLike(k), indices, k, dimensionNumbers),
        lax.scatter(jnp.zerosLike(order), indices, order, dimensionNumbers),
      ];
    });
    if (shift !== 0) {
      k.dispose();
      order.dispose();
    }
    k = nextK!;
    order = nextOrder!;
  }
  return lax.reshape(order, [...keys.shape]);
}
