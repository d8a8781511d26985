/**
 * Table printers of ResourceQuotas, LimitRanges (v1) and PriorityClasses (scheduling.k8s.io/v1),
 * with kubectl's columns: NAME AGE REQUEST LIMIT; NAME CREATED AT; NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY.
 */
import type { TablePrinter } from '../resource.js';
import { AGE_COLUMN, NAME_COLUMN, age, col, get } from './format.js';

/** `pods: 1/2, requests.cpu: 500m/1` over the hard names `pick` keeps, sorted (upstream printResourceQuota). */
function usageCell(hard: Record<string, unknown>, used: Record<string, unknown>, pick: (name: string) => boolean): string {
  return Object.keys(hard)
    .filter(pick)
    .sort()
    .map((k) => `${k}: ${String(used[k] ?? '0')}/${String(hard[k])}`)
    .join(', ');
}

const mapAt = (o: unknown, path: string): Record<string, unknown> => {
  const v = get(o, path);
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
};

export const RESOURCEQUOTA_TABLE: TablePrinter = {
  columns: [NAME_COLUMN, AGE_COLUMN, col('Request', 'Used and hard of the requests and counts.'), col('Limit', 'Used and hard of the limits.')],
  cells: (o, now) => {
    const hard = mapAt(o, 'status.hard');
    const used = mapAt(o, 'status.used');
    return [o.metadata.name, age(o, now), usageCell(hard, used, (k) => !k.startsWith('limits.')), usageCell(hard, used, (k) => k.startsWith('limits.'))];
  },
};

export const LIMITRANGE_TABLE: TablePrinter = {
  columns: [NAME_COLUMN, col('Created At', 'When the object was created.', 0, 'date')],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? ''],
};

export const PRIORITYCLASS_TABLE: TablePrinter = {
  columns: [
    NAME_COLUMN,
    col('Value', 'The priority of the class’s pods.', 0, 'integer'),
    col('Global-Default', 'Whether pods without a class get this one.', 0, 'boolean'),
    AGE_COLUMN,
    col('PreemptionPolicy', 'Whether the class’s pods preempt lower-priority ones.'),
  ],
  cells: (o, now) => [o.metadata.name, typeof o.value === 'number' ? o.value : 0, o.globalDefault === true, age(o, now), typeof o.preemptionPolicy === 'string' ? o.preemptionPolicy : ''],
};
