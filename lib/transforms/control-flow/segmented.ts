// Running a jitted jaxpr that contains control flow: the straight-line runs
// of equations between control-flow equations are compiled as fused
// programs (compiler/executable.ts), and each scan / while / cond runs
// through its eager implementation (impl.ts, which compiles the loop body
// in turn). A bridge until the compiler schedules opaque calls itself.
import { Array } from '../../core/array.js';
import { bind } from '../../core/bind.js';
import { compileJaxpr, type Executable } from '../../compiler/executable.js';
import { inlineCheckpoints } from '../../compiler/inline-checkpoints.js';
import { defaultDevice } from '../../runtime/device.js';
import { type Atom, type ClosedJaxpr, Jaxpr, type JaxprEqn, Literal, Var, literalArray } from '../../trace/jaxpr.js';
import { isControlFlow } from './jaxprs.js';

/** `end`: the index of the equation after the segment's last one. */
type Segment = { end: number } & ({ kind: 'call'; eqn: JaxprEqn } | { kind: 'program'; executable: Executable; inputs: Var[]; outputs: Var[] });

export interface SegmentedProgram {
  segments: Segment[];
  run(args: readonly Array[]): Array[];
}

function build(closed: ClosedJaxpr): SegmentedProgram {
  // checkpoints are inlined first (as fusion does), so control flow inside them is reached
  const jaxpr = inlineCheckpoints(closed.jaxpr);
  const backend = defaultDevice().backend;
  // for each variable, the index of the last equation that reads it (outputs: past the end)
  const lastUse = new Map<Var, number>();
  jaxpr.eqns.forEach((e, i) => e.inputs.forEach((a) => a instanceof Var && lastUse.set(a, i)));
  for (const a of jaxpr.outs) if (a instanceof Var) lastUse.set(a, jaxpr.eqns.length);

  const segments: Segment[] = [];
  let start = 0;
  const flush = (end: number) => {
    if (end <= start) return;
    const eqns = jaxpr.eqns.slice(start, end);
    const defined = new Set<Var>(eqns.flatMap((e) => e.outVars));
    const inputs = [...new Set(eqns.flatMap((e) => e.inputs.filter((a): a is Var => a instanceof Var && !defined.has(a))))];
    const outputs = [...defined].filter((v) => (lastUse.get(v) ?? -1) >= end);
    segments.push({ kind: 'program', end, executable: compileJaxpr(new Jaxpr([], inputs, eqns, outputs), backend), inputs, outputs });
  };
  jaxpr.eqns.forEach((e, i) => {
    if (!isControlFlow(e)) return;
    flush(i);
    segments.push({ kind: 'call', end: i + 1, eqn: e });
    start = i + 1;
  });
  flush(jaxpr.eqns.length);

  const run = (args: readonly Array[]): Array[] => {
    const env = new Map<Var, Array>();
    const ours = new Set<Array>();
    const literals: Array[] = [];
    jaxpr.constVars.forEach((v, i) => env.set(v, closed.consts[i]!));
    jaxpr.inVars.forEach((v, i) => env.set(v, args[i]!));
    const read = (a: Atom): Array => {
      if (a instanceof Literal) {
        const l = literalArray(a);
        literals.push(l);
        return l;
      }
      return env.get(a)!;
    };
    const define = (vars: Var[], values: Array[]) =>
      vars.forEach((v, i) => {
        env.set(v, values[i]!);
        ours.add(values[i]!);
      });
    for (const s of segments) {
      if (s.kind === 'call') define(s.eqn.outVars, bind(s.eqn.primitive, s.eqn.inputs.map(read), s.eqn.params));
      else define(s.outputs, s.executable.run(s.inputs.map(read), []));
      // free what no later segment reads
      literals.splice(0).forEach((l) => l.dispose());
      for (const [v, x] of env) {
        if (ours.has(x) && (lastUse.get(v) ?? -1) < s.end) {
          x.dispose();
          env.delete(v);
        }
      }
    }
    const outs = jaxpr.outs.map((a) => {
      const x = read(a);
      return new Array(x.storage('jax.jit').retain(), x.shape, x.dtype, x.weakType);
    });
    for (const x of [...ours, ...literals]) if (!x.isDisposed) x.dispose();
    return outs;
  };
  return { segments, run };
}

const programs = new WeakMap<ClosedJaxpr, SegmentedProgram>();

/** The program for a jaxpr with control flow, built once per closed jaxpr. */
export function segmentedProgram(closed: ClosedJaxpr): SegmentedProgram {
  let p = programs.get(closed);
  if (!p) programs.set(closed, (p = build(closed)));
  return p;
}
