// memoryPlan().toSVG(): a memory plan (memory-plan.ts) drawn as one
// self-contained SVG, no dependencies, the same text for the same plan.
// Steps run left to right; each memory kind is a lane whose height is what
// the call reserves in it (arguments at the bottom, then outputs with
// storage of their own, then the arena), each buffer a bar over the steps it
// is live at its offset, coloured by role; the step with the most live bytes
// is marked in each lane and its live buffers listed under the picture; the
// copy streams (h2d, d2h) are rows where each transfer's window (the steps it
// may overlap) is drawn around the step that issues it.
import type { MemoryKind } from '../core/primitives.js';
import type { BufferRole, MemoryPlanBuffer, MemoryPlanData } from './memory-plan.js';

export interface SvgOptions {
  /** the picture's width in pixels (default 1200) */
  width?: number;
  /** how many of the peak's live buffers to list per memory kind (default 40; the rest are counted) */
  maxListed?: number;
  /** the title (default: the function's name, platform and "memory plan") */
  title?: string;
}

const OPTION_TYPES: Record<keyof SvgOptions, string> = { width: 'an integer from 400 to 20000', maxListed: 'a non-negative integer', title: 'a string' };

export const ROLE_COLORS: Record<BufferRole, string> = {
  argument: '#4e79a7',
  output: '#59a14f',
  donated: '#9c755f',
  temporary: '#f28e2b',
  aliased: '#edc948',
  residual: '#e15759',
  offloaded: '#b07aa1',
  scratch: '#bab0ac',
};

const STEP_COLORS = { launch: '#8c8c8c', copy: '#17becf', call: '#7b4fa0' } as const;
const PEAK_COLOR = '#d62728';
const WINDOW_COLOR = '#76b7b2';

/** Text safe inside XML elements and attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!)
    // characters XML 1.0 does not allow at all
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '\ufffd');
}

/** Bytes in B, KiB, MiB or GiB (two decimals). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(2)} ${units[unit]}`;
}

function validateOptions(options: unknown): Required<Omit<SvgOptions, 'title'>> & { title?: string } {
  if (options === undefined) return { width: 1200, maxListed: 40 };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`memoryPlan().toSVG: options must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!(key in OPTION_TYPES)) throw new TypeError(`memoryPlan().toSVG: unknown option "${key}" (expected ${Object.keys(OPTION_TYPES).join(', ')})`);
  }
  const width = o.width ?? 1200;
  if (typeof width !== 'number' || !Number.isInteger(width) || width < 400 || width > 20000) throw new TypeError(`memoryPlan().toSVG: width must be ${OPTION_TYPES.width}, got ${JSON.stringify(width)}`);
  const maxListed = o.maxListed ?? 40;
  if (typeof maxListed !== 'number' || !Number.isInteger(maxListed) || maxListed < 0) throw new TypeError(`memoryPlan().toSVG: maxListed must be ${OPTION_TYPES.maxListed}, got ${JSON.stringify(maxListed)}`);
  if (o.title !== undefined && typeof o.title !== 'string') throw new TypeError(`memoryPlan().toSVG: title must be ${OPTION_TYPES.title}, got ${typeof o.title}`);
  return { width, maxListed, ...(o.title !== undefined ? { title: o.title as string } : {}) };
}

const num = (x: number) => (Math.round(x * 100) / 100).toString();

/** The plan drawn as an SVG document (a string). */
export function memoryPlanSvg(plan: MemoryPlanData, options?: SvgOptions): string {
  const { width, maxListed, title } = validateOptions(options);
  const out: string[] = [];
  const text = (x: number, y: number, content: string, attrs = '') => out.push(`<text x="${num(x)}" y="${num(y)}"${attrs}>${escapeXml(content)}</text>`);
  const rect = (cls: string, x: number, y: number, w: number, h: number, fill: string, tip: string, attrs = '') =>
    out.push(`<rect class="${cls}" x="${num(x)}" y="${num(y)}" width="${num(w)}" height="${num(h)}" fill="${fill}"${attrs}><title>${escapeXml(tip)}</title></rect>`);

  const left = 170;
  const right = 20;
  const plotWidth = width - left - right;
  const columns = Math.max(plan.steps.length, 1);
  const stepWidth = plotWidth / columns;
  const x = (step: number) => left + step * stepWidth;
  let y = 28;

  // title and the figures memoryAnalysis() reports
  text(12, y, title ?? `${plan.function} on ${plan.platform}: memory plan (${plan.steps.length} steps, ${plan.buffers.length} buffers)`, ' font-size="16" font-weight="bold"');
  y += 22;
  for (const kind of ['device', 'pinned_host'] as MemoryKind[]) {
    const t = plan.totals[kind];
    text(12, y, `${kind}: ${formatBytes(t.peak)} = arguments ${formatBytes(t.argument)} + outputs ${formatBytes(t.output)} - aliased ${formatBytes(t.alias)} + temporaries ${formatBytes(t.temp)}; most live: ${formatBytes(plan.peak[kind].bytes)} at step ${plan.peak[kind].step}`, ' font-size="12"');
    y += 17;
  }

  // legend
  y += 6;
  let lx = 12;
  for (const role of Object.keys(ROLE_COLORS) as BufferRole[]) {
    rect('legend', lx, y - 10, 12, 12, ROLE_COLORS[role], role);
    text(lx + 16, y, role, ' font-size="12"');
    lx += 22 + role.length * 7;
  }
  rect('legend', lx, y - 10, 12, 12, WINDOW_COLOR, 'transfer window', ' fill-opacity="0.45"');
  text(lx + 16, y, 'transfer window', ' font-size="12"');
  lx += 130;
  out.push(`<line x1="${num(lx)}" y1="${num(y - 10)}" x2="${num(lx)}" y2="${num(y + 2)}" stroke="${PEAK_COLOR}" stroke-width="2" stroke-dasharray="3,2"/>`);
  text(lx + 6, y, 'peak (most bytes live)', ' font-size="12"');
  y += 18;

  // the schedule: one cell per step, coloured by kind
  text(12, y + 11, 'schedule (compute)', ' font-size="12"');
  for (const s of plan.steps) rect('step', x(s.index), y, Math.max(stepWidth - 0.5, 0.5), 14, STEP_COLORS[s.kind], `step ${s.index}: ${s.name} [${s.label}] on ${s.stream}`);
  y += 22;

  // one lane per memory kind; each region (arguments, outputs, arena) is a band of its own linear scale, the arena
  // at least half the lane, so a small arena under large arguments still shows how it is packed
  const laneHeights: Record<MemoryKind, number> = { device: 300, pinned_host: 160 };
  for (const kind of ['device', 'pinned_host'] as MemoryKind[]) {
    const lane = plan.lanes[kind];
    const p = plan.peak[kind];
    text(12, y + 12, kind, ' font-size="13" font-weight="bold"');
    text(left, y + 12, lane.size === 0 ? `nothing in ${kind} memory` : `${formatBytes(lane.size)} reserved; peak: ${formatBytes(p.bytes)} live at step ${p.step}`, ` font-size="12" fill="${lane.size === 0 ? '#666' : PEAK_COLOR}"`);
    y += 18;
    if (lane.size === 0) {
      y += 6;
      continue;
    }
    const height = laneHeights[kind];
    const top = y;
    const bottom = y + height;
    out.push(`<rect class="lane" x="${left}" y="${num(top)}" width="${num(plotWidth)}" height="${num(height)}" fill="#f7f7f7" stroke="#999" stroke-width="0.5"/>`);
    const regions = (['arguments', 'outputs', 'arena'] as const).filter((r) => lane[r].size > 0);
    const share = new Map<string, number>();
    const arenaShare = lane.arena.size ? Math.max(lane.arena.size / lane.size, regions.length > 1 ? 0.5 : 1) : 0;
    const rest = lane.size - lane.arena.size;
    for (const r of regions) share.set(r, r === 'arena' ? arenaShare : rest > 0 ? (1 - arenaShare) * (lane[r].size / rest) : 0);
    // no band thinner than a label: what a thin band lacks comes from the tallest
    const heights = new Map(regions.map((r) => [r, share.get(r)! * height] as const));
    for (const r of regions) {
      const lack = 16 - heights.get(r)!;
      if (lack <= 0) continue;
      const tallest = regions.reduce((a, b) => (heights.get(b)! > heights.get(a)! ? b : a));
      heights.set(tallest, heights.get(tallest)! - lack);
      heights.set(r, 16);
    }
    const band = new Map<string, { bottom: number; scale: number }>();
    let at = bottom;
    const scales = new Set<string>();
    regions.forEach((r, i) => {
      const h = heights.get(r)!;
      band.set(r, { bottom: at, scale: h / lane[r].size });
      scales.add((h / lane[r].size).toPrecision(3));
      if (i % 2 === 1) out.push(`<rect class="region" x="${left}" y="${num(at - h)}" width="${num(plotWidth)}" height="${num(h)}" fill="#ececec"/>`);
      out.push(`<line x1="${left - 4}" y1="${num(at)}" x2="${num(left + plotWidth)}" y2="${num(at)}" stroke="#999" stroke-width="0.5"/>`);
      if (h >= 12) text(left - 6, at - h / 2 + 4, `${r === 'arena' ? 'arena (temp)' : r} ${formatBytes(lane[r].size)}`, ' font-size="10" text-anchor="end"');
      at -= h;
    });
    if (scales.size > 1) {
      text(12, top + 14, 'regions drawn', ' font-size="10" fill="#666"');
      text(12, top + 26, 'at their own scales', ' font-size="10" fill="#666"');
    }
    // the buffers
    for (const b of plan.buffers.filter((b) => b.memoryKind === kind)) {
      const r = band.get(b.region)!;
      const bx = x(b.start);
      const bw = Math.max(x(b.end + 1) - bx - 0.5, 1);
      const bh = Math.max(b.size * r.scale, 1);
      const by = r.bottom - b.offset * r.scale - bh;
      const tip = `${b.name} (${b.role}${b.aliasOf ? ` of ${b.aliasOf}` : ''}): ${b.label}; ${formatBytes(b.size)} at ${b.region} + ${formatBytes(b.offset)}; live at steps ${b.start}-${b.end}`;
      rect(`buffer role-${b.role}`, bx, by, bw, bh, ROLE_COLORS[b.role], tip, ' stroke="#333" stroke-width="0.3" fill-opacity="0.85"');
      if (bw >= 7 * b.name.length + 6 && bh >= 12) text(bx + 3, by + Math.min(bh / 2 + 4, 12), b.name, ' font-size="10" fill="#111"');
    }
    // the peak
    const px = x(p.step + 0.5);
    out.push(`<line class="peak" x1="${num(px)}" y1="${num(top)}" x2="${num(px)}" y2="${num(bottom)}" stroke="${PEAK_COLOR}" stroke-width="2" stroke-dasharray="5,3"><title>${escapeXml(`${kind} peak: ${formatBytes(p.bytes)} live at step ${p.step}`)}</title></line>`);
    y = bottom + 12;
  }

  // the copy streams: each transfer's window and the step that issues it
  for (const stream of ['h2d', 'd2h'] as const) {
    const mine = plan.transfers.filter((t) => t.stream === stream);
    text(12, y + 12, `copy stream ${stream}`, ' font-size="12"');
    out.push(`<rect class="stream" x="${left}" y="${num(y)}" width="${num(plotWidth)}" height="16" fill="#fbfbfb" stroke="#ccc" stroke-width="0.5"/>`);
    if (mine.length === 0) text(left + 8, y + 12, 'no transfers', ' font-size="11" fill="#666"');
    for (const t of mine) {
      const from = x(t.start + 1);
      const to = x(Math.min(t.wait, columns));
      const tip = `step ${t.step}: ${t.src} -> ${t.dst}, ${formatBytes(t.bytes)} on ${stream}; may start after step ${t.start < 0 ? 'entry' : t.start}, done before step ${t.wait >= plan.steps.length ? 'exit' : t.wait}`;
      rect('transfer-window', from, y + 2, Math.max(to - from, 1), 12, WINDOW_COLOR, tip, ' fill-opacity="0.45"');
      rect('transfer', x(t.step), y + 2, Math.max(stepWidth - 0.5, 1), 12, STEP_COLORS.copy, tip, ' stroke="#0b6f7a" stroke-width="0.5"');
    }
    y += 22;
  }

  // the step axis
  const every = Math.max(1, Math.ceil(columns / 24));
  out.push(`<line x1="${left}" y1="${num(y)}" x2="${num(left + plotWidth)}" y2="${num(y)}" stroke="#666" stroke-width="0.5"/>`);
  for (let k = 0; k < columns; k += every) {
    out.push(`<line x1="${num(x(k + 0.5))}" y1="${num(y)}" x2="${num(x(k + 0.5))}" y2="${num(y + 4)}" stroke="#666" stroke-width="0.5"/>`);
    text(x(k + 0.5), y + 15, String(k), ' font-size="10" text-anchor="middle"');
  }
  text(left + plotWidth / 2, y + 30, 'schedule step', ' font-size="11" text-anchor="middle"');
  y += 48;

  // what is live at each peak
  const byName = new Map<string, MemoryPlanBuffer>(plan.buffers.map((b) => [b.name, b] as const));
  for (const kind of ['device', 'pinned_host'] as MemoryKind[]) {
    const p = plan.peak[kind];
    if (plan.lanes[kind].size === 0) continue;
    text(12, y, `Live at the ${kind} peak (step ${p.step}): ${p.live.length} buffers, ${formatBytes(p.bytes)} of ${formatBytes(p.allocated)} reserved`, ' font-size="12" font-weight="bold"');
    y += 16;
    for (const name of p.live.slice(0, maxListed)) {
      const b = byName.get(name)!;
      rect('legend', 16, y - 9, 10, 10, ROLE_COLORS[b.role], b.role);
      const line = `${name}  ${formatBytes(b.size)}  ${b.role}: ${b.label}`;
      const room = Math.floor((width - 40) / 6.2);
      text(32, y, line.length > room ? `${line.slice(0, room - 1)}…` : line, ' font-size="11"');
      y += 14;
    }
    if (p.live.length > maxListed) {
      const rest = p.live.slice(maxListed).reduce((a, name) => a + byName.get(name)!.size, 0);
      text(32, y, `and ${p.live.length - maxListed} more (${formatBytes(rest)})`, ' font-size="11"');
      y += 14;
    }
    y += 8;
  }
  const notes: string[] = [];
  if (plan.calls.length) {
    const described = plan.calls.map((c) => {
      const transfers = c.plans.reduce((a, p) => a + p.plan.transfers.filter((x) => x.stream !== 'compute').length, 0);
      return `${c.primitive} at step ${c.step}${transfers ? ` (${transfers} transfers inside)` : ''}`;
    });
    notes.push(`${described.join(', ')}: one scratch bar each (nested arenas and loop carries); memoryPlan().calls[i].plans[j].plan.toSVG() draws a nested plan`);
  }
  if (plan.constants.length) notes.push(`constants held by the compiled program (in no lane): ${plan.constants.map((c) => `${c.name} ${formatBytes(c.size)} ${c.memoryKind}`).join(', ')}`);
  for (const note of notes) {
    text(12, y, note, ' font-size="11" fill="#444"');
    y += 15;
  }
  const height = Math.ceil(y + 6);
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans, Arial, sans-serif">`,
    `<rect class="background" x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`,
    ...out,
    '</svg>',
    '',
  ].join('\n');
}
