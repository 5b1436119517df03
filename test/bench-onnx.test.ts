// bench:peers' onnxruntime-node side (bench/peers/onnx.ts, issue 16 item 5). onnxruntime-node is installed for the
// benchmark only (npm ci --prefix bench/peers/onnx --ignore-scripts), so the tests that need it say so and pass
// without it; the model writer's wire format is checked here either way, by walking the bytes.
import test from 'ava';
import { graphs, loadOnnxruntime, modelBytes } from '../bench/peers/onnx.js';

interface Wire {
  field: number;
  wire: number;
  value: bigint | Uint8Array;
}

/** The top-level fields of a protobuf message (varint and length-delimited only, as the writer emits). */
function fields(b: Uint8Array): Wire[] {
  const out: Wire[] = [];
  let i = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      const byte = b[i++]!;
      v |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return v;
      shift += 7n;
    }
  };
  while (i < b.length) {
    const k = Number(varint());
    const field = k >> 3;
    const wire = k & 7;
    if (wire === 0) out.push({ field, wire, value: varint() });
    else if (wire === 2) {
      const n = Number(varint());
      out.push({ field, wire, value: b.subarray(i, i + n) });
      i += n;
    } else throw new Error(`unexpected wire type ${wire}`);
  }
  if (i !== b.length) throw new Error('ran past the end');
  return out;
}
const sub = (ws: Wire[], field: number) => ws.filter((w) => w.field === field).map((w) => w.value as Uint8Array);
const text = (b: Uint8Array) => new TextDecoder().decode(b);

test('the ONNX models are well-formed protobuf with the fields of onnx.proto', (t) => {
  const all = graphs();
  t.deepEqual(Object.keys(all), ['chain10', 'sum', 'softmax', 'matmul512', 'matmul1024', 'matmul2048', 'add8']);
  const model = fields(modelBytes('softmax', all['softmax']!));
  t.is(model.find((w) => w.field === 1)!.value, 8n); // ir_version
  const opset = fields(sub(model, 8)[0]!);
  t.is(text(opset.find((w) => w.field === 1)!.value as Uint8Array), '');
  t.is(opset.find((w) => w.field === 2)!.value, 17n);
  const graph = fields(sub(model, 7)[0]!);
  const node = fields(sub(graph, 1)[0]!);
  t.is(text(sub(node, 4)[0]!), 'Softmax');
  const attr = fields(sub(node, 5)[0]!);
  t.is(text(sub(attr, 1)[0]!), 'axis');
  t.is(BigInt.asIntN(64, attr.find((w) => w.field === 3)!.value as bigint), -1n); // int64 -1: ten bytes
  t.is(attr.find((w) => w.field === 20)!.value, 2n); // AttributeProto.INT
  // input: ValueInfoProto name "x", tensor_type elem_type FLOAT, dims 4096 x 1024
  const input = fields(sub(graph, 11)[0]!);
  t.is(text(sub(input, 1)[0]!), 'x');
  const tensorType = fields(sub(fields(sub(input, 2)[0]!), 1)[0]!);
  t.is(tensorType.find((w) => w.field === 1)!.value, 1n);
  const dims = sub(fields(sub(tensorType, 2)[0]!), 1).map((d) => fields(d)[0]!.value);
  t.deepEqual(dims, [4096n, 1024n]);
  // the chain: 11 nodes in order, its scalar constants as initializers
  const chain = fields(sub(fields(modelBytes('chain10', all['chain10']!)), 7)[0]!);
  t.deepEqual(sub(chain, 1).map((n) => text(sub(fields(n), 4)[0]!)), ['Sin', 'Exp', 'Tanh', 'Add', 'Sqrt', 'Log', 'Mul', 'Cos', 'Sub', 'Abs', 'Max']);
  const inits = sub(chain, 5).map((b) => fields(b));
  t.deepEqual(
    inits.map((f) => [text(sub(f, 8)[0]!), new Float32Array(sub(f, 9)[0]!.slice().buffer)[0]]),
    [['one', 1], ['three', 3], ['half', 0.5], ['tenth', Math.fround(0.1)]],
  );
});

test('where onnxruntime-node is installed, every model loads and the small ones agree with JS', async (t) => {
  const loaded = loadOnnxruntime();
  if (!('ort' in loaded)) {
    t.log(`onnxruntime-node ${loaded.missing}: only the wire format was checked`);
    t.pass();
    return;
  }
  t.log(`onnxruntime-node ${loaded.version}`);
  const { ort } = loaded;
  for (const [name, g] of Object.entries(graphs())) {
    const session = await ort.InferenceSession.create(modelBytes(name, g), { intraOpNumThreads: 1, interOpNumThreads: 1 });
    if (name === 'add8') {
      const a = Float32Array.from([0, 1, 2, 3, 4, 5, 6, 7]);
      const b = Float32Array.from([0.5, -1, 2, 8, -4, 0, 1e3, 3]);
      const y = (await session.run({ a: new ort.Tensor('float32', a, [8]), b: new ort.Tensor('float32', b, [8]) }))['y']!;
      t.deepEqual(Array.from(y.data as Float32Array), Array.from(a, (v, i) => Math.fround(v + b[i]!)));
    }
    if (name === 'matmul512') {
      const n = 512;
      const a = Float32Array.from({ length: n * n }, (_, i) => ((i * 7919) % 13) - 6);
      const b = Float32Array.from({ length: n * n }, (_, i) => ((i * 104729) % 11) - 5);
      const y = (await session.run({ a: new ort.Tensor('float32', a, [n, n]), b: new ort.Tensor('float32', b, [n, n]) }))['y']!.data as Float32Array;
      for (const [r, c] of [[0, 0], [17, 300], [511, 511]] as const) {
        let s = 0;
        for (let k = 0; k < n; k++) s += a[r * n + k]! * b[k * n + c]!;
        t.is(y[r * n + c], s, `(${r}, ${c})`); // small integers: exact in float32
      }
    }
    await session.release();
  }
});
