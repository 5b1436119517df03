// A readable schedule of a program plan (Compiled.asText, Executable.toString):
// one line per step with its kernel, the primitives it fuses and its buffers
// (arena offsets, memory kinds), copy windows on the transfer streams, and
// nested plans of control flow indented.
import { kernelName } from './kernel-ir.js';
import type { ProgramPlan } from './plan.js';

/** A readable schedule: one line per step, nested plans indented. */
export function describePlan(plan: ProgramPlan, indent = ''): string {
  const name = (id: number) => {
    const p = plan.placements[id]!;
    const b = plan.program.buffers[id]!;
    const where = p.place === 'arena' ? `@${p.offset}${b.memoryKind === 'pinned_host' ? 'h' : ''}` : '';
    return `${p.place === 'argument' ? 'arg' : p.place === 'constant' ? 'const' : p.place === 'literal' ? 'lit' : p.place === 'arena' ? 'tmp' : 'out'}${id}${where}`;
  };
  const lines: string[] = [];
  plan.program.steps.forEach((s, k) => {
    if (s.kind === 'launch') lines.push(`${indent}${k}: ${kernelName(s.kernel).slice(0, 160)} [${s.label}] (${s.buffers.map(name).join(', ')})`);
    else if (s.kind === 'copy') {
      // the transfer's stream and window (schedule.ts): it may start after step `start` and is waited on before step `wait`
      const t = plan.transfers.find((x) => x.step === k)!;
      const window = t.stream === 'compute' ? '' : ` {${t.stream}: start after ${t.start < 0 ? 'entry' : t.start}, wait before ${t.wait === plan.program.steps.length ? 'exit' : t.wait}}`;
      lines.push(`${indent}${k}: copy ${name(s.src)} -> ${name(s.dst)} [${s.label}]${window}`);
    }
    else {
      const layout = plan.calls.get(k)!;
      // a scan's xs copied to the device one iteration ahead (CallLayout.prefetch): which, and the slices' bytes
      const prefetch = layout.prefetch.length ? ` {prefetch ${layout.prefetch.map((f) => `xs[${f.xs}] 2 x ${f.bytes} B`).join(', ')}}` : '';
      lines.push(`${indent}${k}: ${s.eqn.primitive} (${s.inputs.map(name).join(', ')}) -> (${s.outputs.map(name).join(', ')})${prefetch}`);
      const plans = layout.plans;
      const parts = plans.primitive === 'scan' ? [['body', plans.body] as const]
        : plans.primitive === 'while' ? [['cond', plans.cond] as const, ['body', plans.body] as const]
          : plans.primitive === 'cond' ? plans.branches.map((b, i) => [`branch ${i}`, b] as const)
            : []; // a host callback runs no nested plan
      for (const [label, p] of parts) {
        lines.push(`${indent}  ${label}:`);
        lines.push(describePlan(p, `${indent}    `));
      }
    }
  });
  return lines.join('\n');
}

