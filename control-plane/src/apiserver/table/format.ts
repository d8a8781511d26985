/** Cell formatting shared by the Table printers (kubectl's duration.HumanDuration and friends). */
import type { ApiObject, Json } from '../object.js';
import type { TableColumn, TablePrinter } from '../resource.js';

/** kubectl's human duration: 5s, 3m20s, 15m, 2h30m, 3d4h, 400d, 2y30d. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) return seconds % 60 === 0 ? `${minutes}m` : `${minutes}m${seconds % 60}s`;
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return minutes % 60 === 0 ? `${hours}h` : `${hours}h${minutes % 60}m`;
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) return hours % 24 === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${hours % 24}h`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const days = Math.floor(hours / 24);
  const years = Math.floor(days / 365);
  if (hours < 24 * 365 * 8) return days % 365 === 0 ? `${years}y` : `${years}y${days % 365}d`;
  return `${years}y`;
}

export function age(obj: ApiObject, now: number): string {
  const ts = obj.metadata.creationTimestamp;
  if (!ts) return '<unknown>';
  return humanDuration(now - Date.parse(ts));
}

export const NAME_COLUMN: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Cannot be updated.',
  priority: 0,
};
export const AGE_COLUMN: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  priority: 0,
};

export const col = (name: string, description: string, priority = 0, type: TableColumn['type'] = 'string'): TableColumn => ({ name, type, description, priority });

export interface KindColumns {
  /** The columns between Name and Age. */
  columns: readonly TableColumn[];
  /** The columns after Age (most are `-o wide`'s, priority 1). */
  afterAge?: readonly TableColumn[];
  /** The cells of `columns` then of `afterAge`, in order. */
  cells(o: ApiObject, now: number): unknown[];
  /** The Name cell, when it is not metadata.name. */
  name?(o: ApiObject): string;
}

/** kubectl's layout of nearly every kind: Name, the kind's columns, Age, then the rest. */
export function kindTable(k: KindColumns): TablePrinter {
  return {
    columns: [NAME_COLUMN, ...k.columns, AGE_COLUMN, ...(k.afterAge ?? [])],
    cells: (o, now) => {
      const cells = k.cells(o, now);
      return [k.name ? k.name(o) : o.metadata.name, ...cells.slice(0, k.columns.length), age(o, now), ...cells.slice(k.columns.length)];
    },
  };
}

/** A pod template's containers and images (`-o wide` of every workload). */
export const TEMPLATE_COLUMNS: readonly TableColumn[] = [
  col('Containers', 'Names of each container in the template.', 1),
  col('Images', 'Images referenced by each container in the template.', 1),
];

/** The workloads' wide columns: the template's containers and images, and the selector. */
export const WORKLOAD_COLUMNS: readonly TableColumn[] = [...TEMPLATE_COLUMNS, col('Selector', 'Label selector for pods.', 1)];

/** The cells of WORKLOAD_COLUMNS for a workload whose template and selector are at `at` (e.g. `spec`). */
export function workloadCells(o: ApiObject, at = 'spec'): string[] {
  return [...containersAndImages(get(o, `${at}.template.spec`)), formatLabelSelector(get(o, `${at}.selector`))];
}

export function get(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const p of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Json)[p];
  }
  return cur;
}

export const orNone = (v: unknown): string => (v === undefined || v === null || v === '' ? '<none>' : String(v));

export function formatLabelSelector(sel: unknown): string {
  if (!sel || typeof sel !== 'object') return '<none>';
  const s = sel as { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> };
  const parts = Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of s.matchExpressions ?? []) {
    if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
    else parts.push(`${e.key} ${e.operator.toLowerCase()} (${(e.values ?? []).join(',')})`);
  }
  return parts.length ? parts.join(',') : '<none>';
}

export function containersAndImages(podSpec: unknown): [string, string] {
  const cs = (get(podSpec, 'containers') ?? []) as Array<{ name?: string; image?: string }>;
  return [cs.map((c) => c.name ?? '').join(','), cs.map((c) => c.image ?? '').join(',')];
}
