/**
 * Table printers of Jobs, CronJobs, DaemonSets, StatefulSets and ControllerRevisions, with the
 * columns and cell logic of kubectl's server-side printers (pkg/printers/internalversion).
 */
import type { ApiObject, Json } from '../object.js';
import { col, containersAndImages, get, humanDuration, kindTable, TEMPLATE_COLUMNS, WORKLOAD_COLUMNS, workloadCells } from './format.js';

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

function hasTrueCondition(o: ApiObject, type: string): boolean {
  return ((get(o, 'status.conditions') ?? []) as Array<{ type?: string; status?: string }>).some((c) => c.type === type && c.status === 'True');
}

/** kubectl's Job STATUS column (printJob, 1.32). */
export function jobStatusColumn(o: ApiObject): string {
  if (hasTrueCondition(o, 'Complete')) return 'Complete';
  if (hasTrueCondition(o, 'Failed')) return 'Failed';
  if (o.metadata.deletionTimestamp) return 'Terminating';
  if (hasTrueCondition(o, 'Suspended')) return 'Suspended';
  if (hasTrueCondition(o, 'FailureTarget')) return 'FailureTarget';
  if (hasTrueCondition(o, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

export function jobCompletionsColumn(o: ApiObject): string {
  const succeeded = num(get(o, 'status.succeeded'));
  const completions = get(o, 'spec.completions');
  const parallelism = get(o, 'spec.parallelism');
  if (typeof completions === 'number') return `${succeeded}/${completions}`;
  if (typeof parallelism === 'number' && parallelism > 1) return `${succeeded}/1 of ${parallelism}`;
  return `${succeeded}/1`;
}

function jobDuration(o: ApiObject, now: number): string {
  const start = get(o, 'status.startTime');
  if (typeof start !== 'string') return '';
  const end = get(o, 'status.completionTime');
  return humanDuration((typeof end === 'string' ? Date.parse(end) : now) - Date.parse(start));
}

export const JOB_TABLE = kindTable({
  columns: [
    col('Status', 'Status of the job.'),
    col('Completions', 'The completion status of the job, with the desired completions.'),
    col('Duration', 'Time required to complete the job.'),
  ],
  afterAge: WORKLOAD_COLUMNS,
  cells: (o, now) => [jobStatusColumn(o), jobCompletionsColumn(o), jobDuration(o, now), ...workloadCells(o)],
});

const boolPtr = (v: unknown): string => (v === true ? 'True' : v === false ? 'False' : '<unset>');

export const CRONJOB_TABLE = kindTable({
  columns: [
    col('Schedule', 'The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.'),
    col('Timezone', 'The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones.'),
    col('Suspend', 'This flag tells the controller to suspend subsequent executions.'),
    col('Active', 'A list of pointers to currently running jobs.', 0, 'integer'),
    col('Last Schedule', 'Information when was the last time the job was successfully scheduled.'),
  ],
  afterAge: WORKLOAD_COLUMNS,
  cells: (o, now) => {
    const last = get(o, 'status.lastScheduleTime');
    return [
      String(get(o, 'spec.schedule') ?? ''),
      typeof get(o, 'spec.timeZone') === 'string' ? get(o, 'spec.timeZone') : '<none>',
      boolPtr(get(o, 'spec.suspend')),
      ((get(o, 'status.active') ?? []) as unknown[]).length,
      typeof last === 'string' ? humanDuration(now - Date.parse(last)) : '<none>',
      ...workloadCells(o, 'spec.jobTemplate.spec'),
    ];
  },
});

function nodeSelectorColumn(o: ApiObject): string {
  const sel = (get(o, 'spec.template.spec.nodeSelector') ?? {}) as Record<string, string>;
  const keys = Object.keys(sel).sort();
  return keys.length ? keys.map((k) => `${k}=${sel[k]}`).join(',') : '<none>';
}

export const DAEMONSET_TABLE = kindTable({
  columns: [
    col('Desired', 'The desired number of nodes that should be running the daemon pod.', 0, 'integer'),
    col('Current', 'The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.', 0, 'integer'),
    col('Ready', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.', 0, 'integer'),
    col('Up-to-date', 'The total number of nodes that are running updated daemon pod', 0, 'integer'),
    col('Available', 'The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)', 0, 'integer'),
    col('Node Selector', 'NodeSelector is a selector which must be true for the pod to fit on a node.'),
  ],
  afterAge: WORKLOAD_COLUMNS,
  cells: (o) => [
    num(get(o, 'status.desiredNumberScheduled')),
    num(get(o, 'status.currentNumberScheduled')),
    num(get(o, 'status.numberReady')),
    num(get(o, 'status.updatedNumberScheduled')),
    num(get(o, 'status.numberAvailable')),
    nodeSelectorColumn(o),
    ...workloadCells(o),
  ],
});

export const STATEFULSET_TABLE = kindTable({
  columns: [col('Ready', 'Number of the pod with ready state')],
  afterAge: TEMPLATE_COLUMNS,
  cells: (o) => [`${num(get(o, 'status.readyReplicas'))}/${num(get(o, 'spec.replicas'))}`, ...containersAndImages(get(o, 'spec.template.spec'))],
});

export const CONTROLLERREVISION_TABLE = kindTable({
  columns: [col('Controller', 'Controller of the object'), col('Revision', 'Revision indicates the revision of the state represented by Data.', 0, 'integer')],
  cells: (o) => {
    const ref = ((o.metadata.ownerReferences ?? []) as Array<{ apiVersion: string; kind: string; name: string; controller?: boolean }>).find((r) => r.controller);
    let controller = '<none>';
    if (ref) {
      const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0] : '';
      controller = `${ref.kind.toLowerCase()}${group ? `.${group}` : ''}/${ref.name}`;
    }
    return [controller, num((o as Json).revision)];
  },
});
