// The kernel graph fusion merges in (fuse.ts): kernels in a topological
// order, with an edge from a kernel to every kernel reading a buffer it
// writes. Merging two kernels is refused when it would close a cycle through
// a third one (the merged kernel would have to run both before and after it).
// The check only walks kernels ordered between the two, and an accepted
// merge reorders just that span, so merging stays near linear on long
// programs, where recomputing a full schedule per attempt was quadratic.

/** What the graph needs to know of a kernel: the values (buffers) it reads and writes. */
export interface KernelDeps<K, V> {
  reads(k: K): Iterable<V>;
  produces(k: K): Iterable<V>;
}

export class KernelGraph<K, V> {
  // a merge leaves a hole at the end of the span it reorders, so positions elsewhere stay valid
  #order: (K | null)[];
  #pos = new Map<K, number>();
  #succ = new Map<K, Set<K>>();
  #pred = new Map<K, Set<K>>();
  #producer = new Map<V, K>();

  /** `kernels` must already be in an executable order (each reads only what earlier ones write). */
  constructor(
    kernels: K[],
    private readonly deps: KernelDeps<K, V>,
  ) {
    this.#order = [...kernels];
    kernels.forEach((k, i) => {
      this.#pos.set(k, i);
      this.#succ.set(k, new Set());
      for (const v of deps.produces(k)) this.#producer.set(v, k);
    });
    for (const k of kernels) {
      const preds = this.#producersOf(k);
      for (const p of preds) {
        if (p === k || this.#pos.get(p)! > this.#pos.get(k)!) throw new Error('KernelGraph: internal error: kernels are not in an executable order');
        this.#succ.get(p)!.add(k);
      }
      this.#pred.set(k, preds);
    }
  }

  /** The kernels in an executable order. */
  get kernels(): K[] {
    return this.#order.filter((k): k is K => k !== null);
  }

  has(k: K): boolean {
    return this.#pos.has(k);
  }

  /** Kernels reading what k writes, in order. */
  readersOf(k: K): K[] {
    return this.#sorted(this.#succ.get(k));
  }

  /** Kernels writing what k reads, in order. */
  producersFor(k: K): K[] {
    return this.#sorted(this.#pred.get(k));
  }

  #sorted(set: Set<K> | undefined): K[] {
    return set ? [...set].sort((a, b) => this.#pos.get(a)! - this.#pos.get(b)!) : [];
  }

  #producersOf(k: K): Set<K> {
    const preds = new Set<K>();
    for (const v of this.deps.reads(k)) {
      const p = this.#producer.get(v);
      if (p !== undefined) preds.add(p);
    }
    return preds;
  }

  /** Replaces kernels a and b by `merged` (which computes what both did) if the graph stays acyclic. */
  tryMerge(a: K, b: K, merged: K): boolean {
    if (!this.has(a) || !this.has(b) || a === b) return false;
    const produced = new Set(this.deps.produces(merged));
    for (const r of this.deps.reads(merged)) if (produced.has(r)) return false;
    const [first, second] = this.#pos.get(a)! < this.#pos.get(b)! ? [a, b] : [b, a];
    const limit = this.#pos.get(second)!;
    // descendants of `first` ordered before `second`; if one of them feeds `second`, merging closes a cycle
    const between = new Set<K>();
    const stack = [...this.#succ.get(first)!].filter((x) => x !== second);
    while (stack.length) {
      const x = stack.pop()!;
      if (between.has(x)) continue;
      between.add(x);
      for (const y of this.#succ.get(x)!) {
        if (y === second) return false;
        if (this.#pos.get(y)! < limit) stack.push(y);
      }
    }
    const start = this.#pos.get(first)!;
    const succs = new Set([...this.#succ.get(first)!, ...this.#succ.get(second)!]);
    succs.delete(first);
    succs.delete(second);
    for (const k of [first, second]) {
      for (const p of this.#pred.get(k)!) this.#succ.get(p)?.delete(k);
      for (const q of this.#succ.get(k)!) this.#pred.get(q)?.delete(k);
      this.#pred.delete(k);
      this.#succ.delete(k);
      this.#pos.delete(k);
    }
    for (const v of produced) this.#producer.set(v, merged);
    const preds = this.#producersOf(merged);
    preds.delete(merged);
    this.#pred.set(merged, preds);
    this.#succ.set(merged, succs);
    for (const p of preds) this.#succ.get(p)!.add(merged);
    for (const q of succs) this.#pred.get(q)!.add(merged);
    // kernels between the two that descend from `first` now run after the merged kernel
    const middle = this.#order.slice(start + 1, limit).filter((x): x is K => x !== null);
    const next = [...middle.filter((x) => !between.has(x)), merged, ...middle.filter((x) => between.has(x))];
    for (let k = start; k <= limit; k++) {
      const u = next[k - start] ?? null;
      this.#order[k] = u;
      if (u !== null) this.#pos.set(u, k);
    }
    return true;
  }
}
