// onnxruntime-node's side of `npm run bench:peers` (bench/peers.ts; issue 16 item 5, its second column).
// onnxruntime-node is not a dependency of jaxon: it lives in a bench-only prefix, bench/peers/onnx/ (a committed
// package.json and package-lock.json pinning onnxruntime-node 1.30.0; its node_modules is gitignored). Install it with
//   npm ci --prefix bench/peers/onnx --ignore-scripts
// (--ignore-scripts: the package's install script fetches CUDA libraries from api.nuget.org; the CPU provider's
// binaries ship inside the npm package and need no script.) Without it the benchmark says so and runs the other sides.
// The models are written here, with a small protobuf writer (field numbers of onnx/onnx.proto), so that neither python's
// `onnx` nor any file is needed: each workload is the graph an ONNX user would write (Softmax is ONNX's Softmax op,
// axis -1; the full sum is ReduceSum with keepdims 0 and no axes; matmul is MatMul). Each session runs on the CPU
// execution provider with intraOpNumThreads = the core count (as jaxon's OpenMP and NumPy's OpenBLAS), one inter-op
// thread, all graph optimizations, and is loaded from the bytes in memory. Before timing, its output on jaxon's inputs
// is compared with jaxon's output (float32 tolerances below); a workload whose graph disagrees is not timed.
// This file compiles without the package present: its types are declared locally, and it is loaded by path at run time.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The part of onnxruntime-node's API used here (declared locally so that tsc needs no package). */
export interface OrtTensor {
  readonly data: ArrayLike<number> | BigInt64Array;
  readonly dims: readonly number[];
  dispose?(): void;
}
interface OrtSession {
  run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>>;
  release(): Promise<void>;
}
export interface Ort {
  Tensor: new (type: 'float32', data: Float32Array, dims: readonly number[]) => OrtTensor;
  InferenceSession: {
    create(model: Uint8Array, options: Record<string, unknown>): Promise<OrtSession>;
  };
  env: { versions?: { common?: string; node?: string } };
}

/** bench/peers/onnx/ in the repository (this file runs as dist/bench/peers/onnx.js). */
export const ONNX_PREFIX = fileURLToPath(new URL('../../../bench/peers/onnx/', import.meta.url));
export const ONNX_INSTALL = 'npm ci --prefix bench/peers/onnx --ignore-scripts';

/** onnxruntime-node from the bench prefix (or, failing that, wherever Node resolves it), or why it is absent. */
export function loadOnnxruntime(): { ort: Ort; version: string } | { missing: string } {
  const tried: string[] = [];
  for (const base of [ONNX_PREFIX + 'package.json', fileURLToPath(import.meta.url)]) {
    if (!existsSync(base)) continue;
    try {
      const req = createRequire(base);
      const ort = req('onnxruntime-node') as Ort;
      const pkg = req('onnxruntime-node/package.json') as { version?: string };
      return { ort, version: pkg.version ?? '?' };
    } catch (error) {
      tried.push((error as Error).message.split('\n')[0]!);
    }
  }
  return { missing: `not installed (${ONNX_INSTALL}, from the repository root, installs it for the benchmark only)` + (tried.length && !tried[0]!.startsWith('Cannot find module') ? `: ${tried[0]}` : '') };
}

// ---- a minimal protobuf writer for ModelProto ----

type Field = Uint8Array;

/** A varint; a negative int64 is written as its 64-bit two's complement (10 bytes), as protobuf does. */
function varint(v: number): number[] {
  const out: number[] = [];
  let b = BigInt.asUintN(64, BigInt(v));
  while (b >= 0x80n) {
    out.push(Number(b & 0x7fn) | 0x80);
    b >>= 7n;
  }
  out.push(Number(b));
  return out;
}
const key = (field: number, wire: number) => varint(field * 8 + wire);
const concat = (parts: (Uint8Array | number[])[]): Uint8Array => {
  const n = parts.reduce((s, p) => s + p.length, 0);
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};
const int = (field: number, v: number): Field => Uint8Array.from([...key(field, 0), ...varint(v)]);
const bytes = (field: number, b: Uint8Array): Field => concat([key(field, 2), varint(b.length), b]);
const str = (field: number, s: string): Field => bytes(field, new TextEncoder().encode(s));
const msg = (field: number, ...parts: Field[]): Field => bytes(field, concat(parts));

// onnx.proto field numbers
const FLOAT = 1; // TensorProto.DataType.FLOAT
const ATTR_INT = 2; // AttributeProto.AttributeType.INT

interface Node {
  op: string;
  inputs: string[];
  output: string;
  ints?: Record<string, number>;
}

/** NodeProto: input 1, output 2, name 3, op_type 4, attribute 5 (AttributeProto: name 1, i 3, type 20). */
function node(n: Node, index: number): Field {
  const attrs = Object.entries(n.ints ?? {}).map(([name, v]) => msg(5, str(1, name), int(3, v), int(20, ATTR_INT)));
  return msg(1, ...n.inputs.map((i) => str(1, i)), str(2, n.output), str(3, `n${index}_${n.op}`), str(4, n.op), ...attrs);
}

/** ValueInfoProto: name 1, type 2 -> TypeProto.tensor_type 1 -> elem_type 1, shape 2 -> dim 1 -> dim_value 1. */
function valueInfo(field: number, name: string, shape: readonly number[]): Field {
  return msg(field, str(1, name), msg(2, msg(1, int(1, FLOAT), msg(2, ...shape.map((d) => msg(1, int(1, d)))))));
}

/** A scalar float initializer. TensorProto: dims 1, data_type 2, name 8, raw_data 9 (little-endian). */
function scalar(name: string, v: number): Field {
  const raw = new Uint8Array(new Float32Array([v]).buffer);
  return msg(5, int(2, FLOAT), str(8, name), bytes(9, raw));
}

export interface Graph {
  inputs: [string, readonly number[]][];
  output: [string, readonly number[]];
  nodes: Node[];
  constants?: Record<string, number>;
}

/** ModelProto: ir_version 1, graph 7, opset_import 8 (domain 1, version 2); GraphProto: node 1, name 2, initializer 5, input 11, output 12. */
export function modelBytes(name: string, g: Graph): Uint8Array {
  // ReduceSum was given its axes-as-input form at opset 13; Softmax its last-axis-only meaning at 13. 17 has both.
  const graph = msg(
    7,
    ...g.nodes.map(node),
    str(2, name),
    ...Object.entries(g.constants ?? {}).map(([n, v]) => scalar(n, v)),
    ...g.inputs.map(([n, s]) => valueInfo(11, n, s)),
    valueInfo(12, g.output[0], g.output[1]),
  );
  return concat([int(1, 8), str(2, 'jaxon bench/peers'), graph, msg(8, str(1, ''), int(2, 17))]);
}

// ---- the workloads ----

const N = 2 ** 24;
const chainOps: [string, string?][] = [['Sin'], ['Exp'], ['Tanh'], ['Add', 'one'], ['Sqrt'], ['Log'], ['Mul', 'three'], ['Cos'], ['Sub', 'half'], ['Abs'], ['Max', 'tenth']];

/** The ONNX graph of each workload of bench/peers.ts, by the same key. */
export function graphs(): Record<string, Graph> {
  const nodes: Node[] = [];
  let prev = 'x';
  chainOps.forEach(([op, c], i) => {
    const out = i === chainOps.length - 1 ? 'y' : `t${i}`;
    nodes.push({ op, inputs: c ? [prev, c] : [prev], output: out });
    prev = out;
  });
  const out: Record<string, Graph> = {
    chain10: { inputs: [['x', [N]]], output: ['y', [N]], nodes, constants: { one: 1, three: 3, half: 0.5, tenth: 0.1 } },
    sum: { inputs: [['x', [N]]], output: ['y', []], nodes: [{ op: 'ReduceSum', inputs: ['x'], output: 'y', ints: { keepdims: 0 } }] },
    softmax: { inputs: [['x', [4096, 1024]]], output: ['y', [4096, 1024]], nodes: [{ op: 'Softmax', inputs: ['x'], output: 'y', ints: { axis: -1 } }] },
  };
  for (const n of [512, 1024, 2048]) out[`matmul${n}`] = { inputs: [['a', [n, n]], ['b', [n, n]]], output: ['y', [n, n]], nodes: [{ op: 'MatMul', inputs: ['a', 'b'], output: 'y' }] };
  out['add8'] = { inputs: [['a', [8]], ['b', [8]]], output: ['y', [8]], nodes: [{ op: 'Add', inputs: ['a', 'b'], output: 'y' }] };
  return out;
}

/** jaxon's inputs and output for one workload, to feed ONNX and to check its result. */
export interface Reference {
  inputs: { data: Float32Array; shape: readonly number[] }[];
  output: Float32Array;
  /** |onnx - jaxon| <= atol + rtol * |jaxon| elementwise. */
  atol: number;
  rtol: number;
}

export interface Timing {
  median_ms: number;
  min_ms: number;
  max_ms: number;
}

async function timedAsync(fn: () => Promise<void>, n: number): Promise<Timing> {
  await fn();
  const times: number[] = [];
  for (let r = 0; r < n; r++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return { median_ms: times[n >> 1]!, min_ms: times[0]!, max_ms: times[n - 1]! };
}

export interface OnnxResult {
  version: string;
  timings: Record<string, Timing>;
  /** Per workload: "ok, max |diff| ..." or why it was not timed. */
  checks: Record<string, string>;
}

/** Checks each workload's ONNX output against jaxon's, then times session.run as bench/peers.ts times jaxon. */
export async function onnxSide(ort: Ort, version: string, refs: Record<string, Reference>, threads: number, reps: number, log: (s: string) => void = () => {}): Promise<OnnxResult> {
  const timings: Record<string, Timing> = {};
  const checks: Record<string, string> = {};
  const all = graphs();
  for (const [name, ref] of Object.entries(refs)) {
    const g = all[name];
    if (!g) continue;
    const session = await ort.InferenceSession.create(modelBytes(name, g), {
      executionProviders: ['cpu'],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: 'all',
    });
    try {
      const feeds: Record<string, OrtTensor> = {};
      g.inputs.forEach(([n], i) => {
        feeds[n] = new ort.Tensor('float32', ref.inputs[i]!.data, ref.inputs[i]!.shape);
      });
      const got = (await session.run(feeds))['y']!.data as Float32Array;
      let worst = 0;
      let bad = -1;
      let maxDiff = 0;
      if (got.length !== ref.output.length) bad = -2;
      else
        for (let i = 0; i < got.length; i++) {
          const d = Math.abs(got[i]! - ref.output[i]!);
          const excess = d - (ref.atol + ref.rtol * Math.abs(ref.output[i]!));
          if (d > maxDiff || Number.isNaN(d)) maxDiff = Number.isNaN(d) ? NaN : d;
          if (!(excess <= 0) && (bad < 0 || excess > worst)) {
            worst = excess;
            bad = i;
          }
        }
      if (bad !== -1) {
        checks[name] = bad === -2 ? `WRONG: ${got.length} elements, jaxon ${ref.output.length}` : `WRONG: at ${bad} onnxruntime ${got[bad]} vs jaxon ${ref.output[bad]}`;
        log(`onnxruntime ${name}: ${checks[name]}; not timed`);
        continue;
      }
      checks[name] = `ok (max |diff| ${maxDiff.toExponential(1)}, atol ${ref.atol} + rtol ${ref.rtol})`;
      log(`onnxruntime ${name}: agrees with jaxon, ${checks[name]}`);
      if (name === 'add8') {
        // Host time per call of session.run (its own promise and setImmediate hop included), inputs preallocated.
        const calls = 20000;
        for (let i = 0; i < 2000; i++) await session.run(feeds);
        const t = await timedAsync(async () => {
          for (let i = 0; i < calls; i++) await session.run(feeds);
        }, 5);
        const us = (ms: number) => (ms * 1000) / calls;
        timings[name] = { median_ms: us(t.median_ms), min_ms: us(t.min_ms), max_ms: us(t.max_ms) };
      } else {
        timings[name] = await timedAsync(async () => {
          await session.run(feeds);
        }, reps);
      }
    } finally {
      await session.release();
    }
  }
  return { version, timings, checks };
}
