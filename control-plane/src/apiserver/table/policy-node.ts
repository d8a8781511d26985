/**
 * Table printers of PodDisruptionBudgets (policy/v1) and RuntimeClasses (node.k8s.io/v1), with
 * kubectl's columns: NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS AGE and NAME HANDLER AGE.
 */
import type { TablePrinter } from '../resource.js';
import { AGE_COLUMN, NAME_COLUMN, age, col, get } from './format.js';

const intOrStringCell = (v: unknown): string => (typeof v === 'number' || typeof v === 'string' ? String(v) : 'N/A');

export const PODDISRUPTIONBUDGET_TABLE: TablePrinter = {
  columns: [
    NAME_COLUMN,
    col('Min Available', 'Pods that must stay available.'),
    col('Max Unavailable', 'Pods that may be unavailable at once.'),
    col('Allowed Disruptions', 'Evictions the budget allows now.', 0, 'integer'),
    AGE_COLUMN,
  ],
  cells: (o, now) => {
    const allowed = get(o, 'status.disruptionsAllowed');
    return [o.metadata.name, intOrStringCell(get(o, 'spec.minAvailable')), intOrStringCell(get(o, 'spec.maxUnavailable')), typeof allowed === 'number' ? allowed : 0, age(o, now)];
  },
};

export const RUNTIMECLASS_TABLE: TablePrinter = {
  columns: [NAME_COLUMN, col('Handler', 'The CRI runtime handler that runs pods of this class.'), AGE_COLUMN],
  cells: (o, now) => [o.metadata.name, typeof o.handler === 'string' ? o.handler : '', age(o, now)],
};
