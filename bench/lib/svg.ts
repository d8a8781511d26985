/**
 * Draws a results document (results.ts) as a plain SVG: one row per figure, its value as a bar
 * coloured by its target (green met, red missed, blue when it has none), the same-run baseline
 * as a thin grey bar under it, the target as a dashed line. Each row has its own scale (figures
 * have different units), so rows compare a value with its own baseline and target, never with
 * each other.
 */
import { escapeXml } from '@nodelet/cli';
import type { BenchFigure, BenchResults } from './results.js';
import { targetMet } from './results.js';

const WIDTH = 820;
const LABEL_W = 250;
const BAR_X = LABEL_W + 10;
const BAR_W = 400;
const ROW_H = 34;
const GROUP_H = 24;
const TOP = 44;

function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  return Math.abs(n) >= 100 ? String(Math.round(n)) : String(Math.round(n * 100) / 100);
}

function colour(f: BenchFigure): string {
  const met = targetMet(f);
  return met === undefined ? '#4a78b5' : met ? '#3a9a4a' : '#c8443a';
}

function row(f: BenchFigure, y: number): string[] {
  const max = Math.max(f.value, f.baseline?.value ?? 0, f.target?.value ?? 0) * 1.1 || 1;
  const w = (v: number): number => Math.max(1, Math.round((Math.max(0, v) / max) * BAR_W));
  const out = [
    `<text x="10" y="${y + 14}" class="label">${escapeXml(f.name)}</text>`,
    `<rect x="${BAR_X}" y="${y + 3}" width="${w(f.value)}" height="13" fill="${colour(f)}"/>`,
    `<text x="${BAR_X + w(f.value) + 6}" y="${y + 14}" class="value">${escapeXml(`${fmt(f.value)} ${f.unit}`)}</text>`,
  ];
  if (f.baseline) {
    out.push(
      `<rect x="${BAR_X}" y="${y + 19}" width="${w(f.baseline.value)}" height="6" fill="#9a9a9a"/>`,
      `<text x="${BAR_X + w(f.baseline.value) + 6}" y="${y + 26}" class="base">${escapeXml(`${f.baseline.label}: ${fmt(f.baseline.value)} ${f.unit}`)}</text>`,
    );
  }
  if (f.target) {
    const x = BAR_X + w(f.target.value);
    out.push(
      `<line x1="${x}" y1="${y}" x2="${x}" y2="${y + 28}" stroke="#222" stroke-dasharray="3,2"/>`,
      `<text x="${WIDTH - 10}" y="${y + 14}" class="target" text-anchor="end">${escapeXml(`target ${f.target.op === '<=' ? '≤' : '≥'} ${fmt(f.target.value)}`)}</text>`,
    );
  }
  return out;
}

/** The SVG text for `doc`. */
export function renderBenchSvg(doc: BenchResults): string {
  const groups = new Map<string, BenchFigure[]>();
  for (const f of doc.figures) {
    const g = f.group ?? '';
    groups.set(g, [...(groups.get(g) ?? []), f]);
  }
  const body: string[] = [];
  let y = TOP;
  for (const [g, figures] of groups) {
    if (g) {
      body.push(`<text x="10" y="${y + 16}" class="group">${escapeXml(g)}</text>`);
      y += GROUP_H;
    }
    for (const f of figures) {
      body.push(...row(f, y));
      y += ROW_H;
    }
  }
  const m = doc.machine;
  const subtitle = `${doc.date.slice(0, 16).replace('T', ' ')} UTC${doc.commit ? ` · ${doc.commit}` : ''} · ${m.cpus} CPUs, ${m.memoryGiB} GiB · node ${m.node} · load ${m.loadavg.join(' ')}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y + 10}" viewBox="0 0 ${WIDTH} ${y + 10}" font-family="sans-serif">`,
    '<style>.title{font-size:15px;font-weight:bold}.sub{font-size:11px;fill:#555}.group{font-size:13px;font-weight:bold}.label,.value{font-size:12px}.base,.target{font-size:10px;fill:#444}</style>',
    `<rect width="${WIDTH}" height="${y + 10}" fill="#fff"/>`,
    `<text x="10" y="18" class="title">bench/${escapeXml(doc.bench)}</text>`,
    `<text x="10" y="34" class="sub">${escapeXml(subtitle)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}
