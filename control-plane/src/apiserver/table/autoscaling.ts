/**
 * Table printer of autoscaling/v2 HorizontalPodAutoscalers with kubectl's columns:
 * NAME REFERENCE TARGETS MINPODS MAXPODS REPLICAS AGE (upstream printHorizontalPodAutoscaler).
 */
import type { TablePrinter } from '../resource.js';
import { AGE_COLUMN, NAME_COLUMN, age, col } from './format.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const objAt = (o: unknown, key: string): Obj => (isObj(o) && isObj(o[key]) ? o[key] : {});

/** Upstream shows two metrics and counts the rest. */
const SHOWN_METRICS = 2;
const UNKNOWN = '<unknown>';

/** `current/target` of one metric: a percentage for Utilization targets, else the quantity. */
function metricCell(spec: Obj, status: Obj | undefined): string {
  const field = { Resource: 'resource', ContainerResource: 'containerResource', Pods: 'pods', Object: 'object', External: 'external' }[String(spec.type)];
  if (!field) return `${UNKNOWN}/${UNKNOWN}`;
  const source = objAt(spec, field);
  const target = objAt(source, 'target');
  const current = objAt(objAt(status, field), 'current');
  let label = '';
  if (field === 'resource') label = `${String(source.name)}: `;
  else if (field === 'containerResource') label = `${String(source.name)} of container "${String(source.container)}": `;
  else label = `${String(objAt(source, 'metric').name)}: `;
  if (target.type === 'Utilization') {
    const cur = typeof current.averageUtilization === 'number' ? `${current.averageUtilization}%` : UNKNOWN;
    return `${label}${cur}/${String(target.averageUtilization)}%`;
  }
  const key = target.type === 'Value' ? 'value' : 'averageValue';
  const cur = current[key] !== undefined ? String(current[key]) : UNKNOWN;
  return `${label}${cur}/${String(target[key])}${target.type === 'AverageValue' && field !== 'resource' && field !== 'containerResource' ? ' (avg)' : ''}`;
}

function targetsCell(metrics: unknown, currentMetrics: unknown): string {
  const specs = Array.isArray(metrics) ? metrics.filter(isObj) : [];
  if (specs.length === 0) return '<none>';
  const statuses = Array.isArray(currentMetrics) ? currentMetrics.filter(isObj) : [];
  const cells = specs.slice(0, SHOWN_METRICS).map((m, i) => metricCell(m, statuses[i]?.type === m.type ? statuses[i] : undefined));
  const more = specs.length - SHOWN_METRICS;
  return more > 0 ? `${cells.join(', ')} + ${more} more...` : cells.join(', ');
}

export const HORIZONTALPODAUTOSCALER_TABLE: TablePrinter = {
  columns: [
    NAME_COLUMN,
    col('Reference', 'The object scaled, as Kind/name.'),
    col('Targets', 'Current and target value of each metric.'),
    col('MinPods', 'The fewest replicas the autoscaler sets.'),
    col('MaxPods', 'The most replicas the autoscaler sets.', 0, 'integer'),
    col('Replicas', 'The replicas the target had when last read.', 0, 'integer'),
    AGE_COLUMN,
  ],
  cells: (o, now) => {
    const spec = objAt(o, 'spec');
    const status = objAt(o, 'status');
    const ref = objAt(spec, 'scaleTargetRef');
    return [
      o.metadata.name,
      `${String(ref.kind)}/${String(ref.name)}`,
      targetsCell(spec.metrics, status.currentMetrics),
      typeof spec.minReplicas === 'number' ? String(spec.minReplicas) : '<unset>',
      typeof spec.maxReplicas === 'number' ? spec.maxReplicas : 0,
      typeof status.currentReplicas === 'number' ? status.currentReplicas : 0,
      age(o, now),
    ];
  },
};
