// The jaxpr IR: typed SSA over primitives (constvars, invars, equations,
// outputs), its JAX-style printer, and an evaluator that re-binds every
// equation (so evaluating a jaxpr under a transformation transforms it).
import { Array } from '../core/array.js';
import { arrayFromValues, bind } from '../core/bind.js';
import type { DType } from '../core/dtype.js';
import type { Primitive, PrimitiveParams, ShapedArray } from '../core/primitives.js';
import { primitivesWith } from '../core/traits.js';

export class Var {
  constructor(readonly aval: ShapedArray) {}
}

/** A scalar constant written inline in a jaxpr (`2.0:f32[]`). */
export class Literal {
  constructor(
    readonly value: number,
    readonly aval: ShapedArray,
  ) {}
}

export type Atom = Var | Literal;

export interface JaxprEqn<P extends Primitive = Primitive> {
  primitive: P;
  inputs: Atom[];
  params: PrimitiveParams[P];
  outVars: Var[];
}

export class Jaxpr {
  constructor(
    readonly constVars: Var[],
    readonly inVars: Var[],
    readonly eqns: JaxprEqn[],
    readonly outs: Atom[],
  ) {}

  toString(): string {
    return printJaxpr(this);
  }
}

/** A jaxpr with the values of its constvars. */
export class ClosedJaxpr {
  constructor(
    readonly jaxpr: Jaxpr,
    readonly consts: Array[],
  ) {}
  get inAvals(): ShapedArray[] {
    return this.jaxpr.inVars.map((v) => v.aval);
  }
  get outAvals(): ShapedArray[] {
    return this.jaxpr.outs.map((v) => v.aval);
  }
  toString(): string {
    return printJaxpr(this.jaxpr);
  }
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.toString();
  }
}

const SHORT: Record<DType, string> = {
  bool: 'bool', int8: 'i8', int16: 'i16', int32: 'i32', uint8: 'u8', uint16: 'u16', uint32: 'u32',
  float16: 'f16', bfloat16: 'bf16', float32: 'f32', float64: 'f64',
};

/** `f32[4,2]`; a value in host memory prints as JAX prints it, `f32<host>[4,2]`. */
export function avalString(a: ShapedArray): string {
  const space = a.memorySpace && a.memorySpace !== 'device' ? '<host>' : '';
  return `${SHORT[a.dtype]}${space}[${a.shape.join(',')}]`;
}

function varName(i: number): string {
  let s = '';
  let n = i;
  do {
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26) - 1;
  } while (n >= 0);
  return s;
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function holdsJaxpr(value: unknown): boolean {
  return value instanceof ClosedJaxpr || value instanceof Jaxpr || (globalThis.Array.isArray(value) && value.some(holdsJaxpr));
}

/** Variable names continue through nested jaxprs (as JAX prints them), so a name means one variable. */
interface NameCounter {
  next: number;
}

function paramString(value: unknown, counter: NameCounter): string {
  if (globalThis.Array.isArray(value)) return `(${value.map((v) => paramString(v, counter)).join(', ')}${value.length === 1 ? ',' : ''})`;
  if (value instanceof ClosedJaxpr || value instanceof Jaxpr) return printJaxpr(value instanceof ClosedJaxpr ? value.jaxpr : value, counter);
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'object') {
    return `(${Object.entries(value as object).map(([k, v]) => `${snake(k)}=${paramString(v, counter)}`).join(', ')})`;
  }
  return String(value);
}

export function literalString(l: Literal): string {
  const d = l.aval.dtype;
  let v: string;
  if (d === 'bool') v = l.value ? 'True' : 'False';
  else if (d.startsWith('float') || d === 'bfloat16') v = Number.isInteger(l.value) ? `${l.value}.0` : String(l.value);
  else v = String(l.value);
  return `${v}:${avalString(l.aval)}`;
}

export function printJaxpr(jaxpr: Jaxpr, counter: NameCounter = { next: 0 }): string {
  const names = new Map<Var, string>();
  const name = (v: Var) => {
    let n = names.get(v);
    if (!n) {
      n = varName(counter.next++);
      names.set(v, n);
    }
    return n;
  };
  const atom = (a: Atom) => (a instanceof Literal ? literalString(a) : name(a));
  const binder = (v: Var) => `${name(v)}:${avalString(v.aval)}`;
  const consts = jaxpr.constVars.map(binder).join(' ');
  const ins = jaxpr.inVars.map(binder).join(' ');
  const lines = jaxpr.eqns.map((e) => {
    const outVars = e.outVars.map(binder).join(' ');
    const params = Object.entries(e.params as object);
    const nested = params.some(([, v]) => holdsJaxpr(v));
    // params holding jaxprs go one per line, as JAX prints scan / cond / while
    const p = !params.length ? '' : nested
      ? `[\n${params.map(([k, v]) => `      ${snake(k)}=${paramString(v, counter).replace(/\n/g, '\n      ')}`).join('\n')}\n    ]`
      : `[${params.map(([k, v]) => `${snake(k)}=${paramString(v, counter)}`).join(' ')}]`;
    // an equation without outputs (a debug callback) prints without ' = ', as JAX prints it
    return `    ${outVars ? `${outVars} = ` : ''}${e.primitive}${p} ${e.inputs.map(atom).join(' ')}`;
  });
  const outs = jaxpr.outs.map(atom);
  return `{ lambda ${consts}${consts ? '' : ''}; ${ins}. let\n${lines.join('\n')}${lines.length ? '\n' : ''}  in (${outs.join(', ')}${outs.length === 1 ? ',' : ''}) }`;
}

// ---- effects ----

const EFFECTFUL = primitivesWith('effectful');
const effectfulJaxprs = new WeakMap<Jaxpr, boolean>();

function holdsEffects(value: unknown): boolean {
  if (value instanceof ClosedJaxpr) return jaxprHasEffects(value.jaxpr);
  if (value instanceof Jaxpr) return jaxprHasEffects(value);
  return globalThis.Array.isArray(value) && value.some(holdsEffects);
}

/**
 * Whether an equation has an effect (JAX's jaxpr effects): an effectful
 * primitive (debug_callback), or one whose params hold a jaxpr with one (a
 * loop or branch that prints). Such equations are kept even when nothing
 * reads their outputs, never merged with equal ones, and stay in order.
 */
export function eqnHasEffects(e: JaxprEqn): boolean {
  if (EFFECTFUL.has(e.primitive)) return true;
  return Object.values(e.params as object).some(holdsEffects);
}

export function jaxprHasEffects(jaxpr: Jaxpr): boolean {
  let known = effectfulJaxprs.get(jaxpr);
  if (known === undefined) {
    known = jaxpr.eqns.some(eqnHasEffects);
    effectfulJaxprs.set(jaxpr, known);
  }
  return known;
}

/** The value of a literal, as a new scalar Array. */
export function literalArray(l: Literal): Array {
  return arrayFromValues([l.value], [], l.aval.dtype, l.aval.weakType);
}

/**
 * Evaluates a jaxpr by binding each equation: concretely when the arguments
 * are concrete, and under whatever transformation traces them otherwise.
 */
export function evalJaxpr(jaxpr: Jaxpr, consts: readonly Array[], args: readonly Array[]): Array[] {
  const env = new Map<Var, Array>();
  const read = (a: Atom): Array => {
    if (a instanceof Literal) return literalArray(a);
    const v = env.get(a);
    if (!v) throw new Error('evalJaxpr: a variable is read before it is defined (malformed jaxpr)');
    return v;
  };
  jaxpr.constVars.forEach((v, i) => env.set(v, consts[i]!));
  jaxpr.inVars.forEach((v, i) => env.set(v, args[i]!));
  for (const e of jaxpr.eqns) {
    const outs = bind(e.primitive, e.inputs.map(read), e.params);
    e.outVars.forEach((v, i) => env.set(v, outs[i]!));
  }
  return jaxpr.outs.map(read);
}
