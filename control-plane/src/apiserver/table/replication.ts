/**
 * Table printers of v1 ReplicationControllers (NAME DESIRED CURRENT READY AGE, wide CONTAINERS
 * IMAGES SELECTOR) and PodTemplates (TEMPLATE CONTAINERS IMAGES POD LABELS), as kubectl's.
 */
import type { TablePrinter } from '../resource.js';
import { REPLICASET_TABLE } from './others.js';
import { NAME_COLUMN, col, containersAndImages, get } from './format.js';

const labelMap = (v: unknown): string => {
  const entries = v && typeof v === 'object' ? Object.entries(v as Record<string, string>) : [];
  return entries.length ? entries.map(([k, x]) => `${k}=${x}`).join(',') : '<none>';
};

/** A ReplicaSet's columns; the selector cell reads the RC's label map. */
export const REPLICATIONCONTROLLER_TABLE: TablePrinter = {
  columns: REPLICASET_TABLE.columns,
  cells: (o, now) => {
    const cells = REPLICASET_TABLE.cells(o, now);
    cells[cells.length - 1] = labelMap(get(o, 'spec.selector'));
    return cells;
  },
};

export const PODTEMPLATE_TABLE: TablePrinter = {
  columns: [
    { ...NAME_COLUMN, name: 'Template' },
    col('Containers', 'Names of each container in the template.'),
    col('Images', 'Images referenced by each container in the template.'),
    col('Pod Labels', 'The labels for the pod template.'),
  ],
  cells: (o) => [o.metadata.name, ...containersAndImages(get(o, 'template.spec')), labelMap(get(o, 'template.metadata.labels'))],
};
