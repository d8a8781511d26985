/**
 * The waterfall as an SVG picture (`nodelet trace pod --svg`, `bench/pod-startup --svg`): one or
 * more journeys stacked, each a title, a time axis and one bar per row (top-level steps coloured
 * by component, steps inside them lighter, waits hatched grey). Self-contained SVG 1.1; every
 * text is escaped.
 */
import type { Waterfall, WaterfallRow } from './waterfall.js';
import { formatMs } from './render-text.js';

export interface SvgPanel {
  title: string;
  waterfall: Waterfall;
}

const WIDTH = 1000;
const LABEL = 330;
const ROW = 18;
const PAD = 10;
const COLORS: Record<string, string> = { apiserver: '#3b6fd8', scheduler: '#8a4fd0', agent: '#2a9d5c' };
const LIGHT: Record<string, string> = { apiserver: '#9db7ec', scheduler: '#c5a7e8', agent: '#95cead' };

export function escapeXml(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c]!);
}

/** A round tick step giving about 8 ticks over `ms`. */
function tickStep(ms: number): number {
  const raw = Math.max(ms, 1) / 8;
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw)!;
}

function panel(p: SvgPanel, y0: number): { svg: string[]; height: number } {
  const w = p.waterfall;
  const span = Math.max(w.endMs - w.startMs, 1e-9);
  // Room on the right for the last tick and duration labels.
  const plot = WIDTH - LABEL - PAD * 2 - 50;
  const x = (ms: number): number => LABEL + PAD + Math.max(0, Math.min(1, (ms - w.startMs) / span)) * plot;
  const out: string[] = [];
  const total = w.complete ? `journey ${formatMs(span)}` : `incomplete, ${formatMs(span)} so far`;
  out.push(`<text x="${PAD}" y="${y0 + 16}" class="title">${escapeXml(`${p.title} · ${total} · steps+waits ${formatMs(w.topLevelSumMs)}`)}</text>`);
  const axisY = y0 + 34;
  const step = tickStep(span);
  for (let t = 0; t <= span + 1e-6; t += step) {
    const tx = x(w.startMs + t);
    out.push(`<line x1="${tx.toFixed(1)}" y1="${axisY}" x2="${tx.toFixed(1)}" y2="${axisY + 6 + w.rows.length * ROW}" class="grid"/>`);
    out.push(`<text x="${tx.toFixed(1)}" y="${axisY - 3}" class="tick">${escapeXml(formatMs(t))}</text>`);
  }
  w.rows.forEach((r: WaterfallRow, i) => {
    const y = axisY + 6 + i * ROW;
    const label = `${r.gap ? '~ ' : ''}${r.name}${r.attributes?.['k8s.container.name'] ? ` (${String(r.attributes['k8s.container.name'])})` : ''}`;
    out.push(`<text x="${PAD + r.depth * 14}" y="${y + 13}" class="${r.gap ? 'gap' : 'label'}">${escapeXml(label)}</text>`);
    const x1 = x(r.startMs);
    const width = Math.max(1, x(r.endMs) - x1);
    const fill = r.gap ? 'url(#hatch)' : r.error ? '#d64545' : ((r.depth === 0 ? COLORS : LIGHT)[r.scope ?? ''] ?? '#888888');
    out.push(`<rect x="${x1.toFixed(1)}" y="${y + 3}" width="${width.toFixed(1)}" height="${ROW - 6}" fill="${fill}"><title>${escapeXml(`${r.name}: ${formatMs(r.endMs - r.startMs)} at +${formatMs(r.startMs - w.startMs)}${r.error ? ` (${r.error})` : ''}`)}</title></rect>`);
    const dur = formatMs(r.endMs - r.startMs);
    const tx = x1 + width + 4 > WIDTH - 50 ? x1 - 4 : x1 + width + 4;
    out.push(`<text x="${tx.toFixed(1)}" y="${y + 13}" class="dur"${tx < x1 ? ' text-anchor="end"' : ''}>${escapeXml(dur)}</text>`);
  });
  return { svg: out, height: 40 + w.rows.length * ROW + 16 };
}

export function renderWaterfallSvg(panels: readonly SvgPanel[]): string {
  const body: string[] = [];
  let y = PAD;
  for (const p of panels) {
    const r = panel(p, y);
    body.push(...r.svg);
    y += r.height;
  }
  const height = y + PAD;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="monospace" font-size="11">`,
    `<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#eeeeee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" stroke-width="2"/></pattern>`,
    `<style>.title{font-size:13px;font-weight:bold}.tick{fill:#666;text-anchor:middle;font-size:10px}.grid{stroke:#e4e4e4}.label{fill:#222}.gap{fill:#777;font-style:italic}.dur{fill:#444;font-size:10px}</style></defs>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    ...body,
    `</svg>`,
    '',
  ].join('\n');
}
