/**
 * The waterfall in a terminal: one row per step (offset from the create request, duration, name
 * indented under its step, a bar on the journey's time axis), then the totals and what each end of
 * the journey is. Plain text, no colour, fixed width.
 */
import type { Waterfall, WaterfallRow } from './waterfall.js';

export interface PodTimestamps {
  /** metadata.creationTimestamp and the Ready condition's lastTransitionTime (RFC 3339, 1 s resolution). */
  created?: string;
  ready?: string;
}

const BAR = 40;

export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(3)} s`;
  return `${ms.toFixed(1)} ms`;
}

function bar(w: Waterfall, r: WaterfallRow): string {
  const span = Math.max(w.endMs - w.startMs, 1e-9);
  const from = Math.min(BAR - 1, Math.max(0, Math.floor(((r.startMs - w.startMs) / span) * BAR)));
  const to = Math.min(BAR, Math.max(from + 1, Math.round(((r.endMs - w.startMs) / span) * BAR)));
  const ch = r.gap ? '░' : r.depth === 0 ? '█' : '▒';
  return ' '.repeat(from) + ch.repeat(to - from) + ' '.repeat(BAR - to);
}

/** The waterfall of `w` for pod `title`; `pod` adds the pod's own create → Ready for comparison. */
export function renderWaterfallText(w: Waterfall, title: string, pod: PodTimestamps = {}): string {
  const nameWidth = Math.min(48, Math.max(24, ...w.rows.map((r) => r.depth * 2 + r.name.length + (r.gap ? 2 : 0) + (r.error ? 2 : 0))));
  const lines = [`${title}   trace ${w.traceId}`, '', `${'offset'.padStart(10)} ${'duration'.padStart(10)}  ${'step'.padEnd(nameWidth)}  |${' '.repeat(BAR)}|`];
  for (const r of w.rows) {
    const label = `${'  '.repeat(r.depth)}${r.gap ? '~ ' : ''}${r.name}${r.error ? ' !' : ''}`;
    const detail = r.attributes?.['k8s.container.name'] ? ` (${String(r.attributes['k8s.container.name'])})` : '';
    lines.push(`${formatMs(r.startMs - w.startMs).padStart(10)} ${formatMs(r.endMs - r.startMs).padStart(10)}  ${(label + detail).padEnd(nameWidth)}  |${bar(w, r)}|${r.error ? `  ${r.error}` : ''}`);
  }
  const journey = w.endMs - w.startMs;
  lines.push('');
  lines.push(`top-level steps and waits:  ${formatMs(w.topLevelSumMs)}${w.overlapMs >= 0.5 ? ` (steps overlapped by ${formatMs(w.overlapMs)})` : ''}`);
  if (w.complete) {
    lines.push(`journey:                    ${formatMs(journey)}  (from the API server receiving the create request to it storing the status that made the pod Ready)`);
  } else {
    lines.push(`journey:                    incomplete: no Ready seen by the API server yet (or its root span was dropped); ${formatMs(journey)} of spans so far`);
  }
  if (pod.created && pod.ready) {
    const s = (Date.parse(pod.ready) - Date.parse(pod.created)) / 1000;
    lines.push(`pod timestamps:             ${s.toFixed(0)} s  (creationTimestamp ${pod.created} → Ready lastTransitionTime ${pod.ready}; 1 s resolution)`);
  }
  if (w.detached > 0) lines.push(`${w.detached} span(s) whose parent is not in this trace are listed last`);
  lines.push('~ a wait between steps (computed, not recorded)   ! the step failed');
  return lines.join('\n') + '\n';
}
