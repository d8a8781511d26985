/**
 * The Priority admission plugin (upstream plugin/pkg/admission/priority):
 *
 *   - a new pod's `priorityClassName` is resolved into `priority` and `preemptionPolicy` (403
 *     `no PriorityClass with name x was found`); a pod without a class gets the globalDefault
 *     class (the lowest-valued one when several are), else priority 0;
 *   - a pod that sets `priority` or `preemptionPolicy` other than its class's is refused;
 *   - at most one PriorityClass is the globalDefault;
 *   - the built-in `system-` classes cannot be deleted.
 *
 * Pods in any namespace may use the system classes, as upstream since 1.17 (restricting them is a
 * ResourceQuota admission configuration, which this server does not take).
 */
import { SYSTEM_PRIORITY_CLASSES } from '@nodelet/api';
import type { ServerContext } from '../context.js';
import { MATCH_ALL } from '../filter.js';
import { findMirrored, listMirrored } from '../mirror.js';
import { isPlainObject, type ApiObject } from '../object.js';
import { forbidden } from '../status.js';
import type { AdmissionPlugin } from './types.js';

const DEFAULT_PREEMPTION = 'PreemptLowerPriority';

const priorityClassesOf = (ctx: ServerContext) => ctx.resource('scheduling.k8s.io', 'v1', 'priorityclasses');

/** Every PriorityClass, from the store: a PriorityClass write decides on the current set. */
async function priorityClasses(ctx: ServerContext): Promise<ApiObject[]> {
  const served = priorityClassesOf(ctx);
  return served ? (await served.registry.list({ filter: MATCH_ALL })).items : [];
}

/** The class a pod without one gets: the globalDefault with the lowest value (upstream getDefaultPriorityClass). */
function defaultClass(classes: readonly ApiObject[]): ApiObject | undefined {
  return classes.filter((c) => c.globalDefault === true).sort((a, b) => Number(a.value) - Number(b.value))[0];
}

async function admitPod(ctx: ServerContext, pod: ApiObject): Promise<void> {
  const spec = pod.spec;
  if (!isPlainObject(spec)) return;
  const refuse = (why: string): never => {
    throw forbidden(`pods "${pod.metadata.name ?? ''}" is forbidden: ${why}`);
  };
  const name = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  let priority = 0;
  let policy = DEFAULT_PREEMPTION;
  // Every pod create reads the classes: from memory (listMirrored), as upstream's lister.
  const served = priorityClassesOf(ctx);
  if (name === '') {
    const pc = defaultClass(served ? await listMirrored(ctx, served, undefined) : []);
    if (pc) {
      spec.priorityClassName = pc.metadata.name;
      priority = Number(pc.value);
      policy = typeof pc.preemptionPolicy === 'string' ? pc.preemptionPolicy : DEFAULT_PREEMPTION;
    }
  } else {
    const pc = served && (await findMirrored(ctx, served, undefined, name));
    if (!pc) refuse(`no PriorityClass with name ${name} was found`);
    priority = Number(pc!.value);
    policy = typeof pc!.preemptionPolicy === 'string' ? pc!.preemptionPolicy : DEFAULT_PREEMPTION;
  }
  if (typeof spec.priority === 'number' && spec.priority !== priority) {
    refuse(`the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`);
  }
  spec.priority = priority;
  if (typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== policy) {
    refuse(`the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`);
  }
  spec.preemptionPolicy = policy;
}

export const priorityAdmission: AdmissionPlugin = async (ctx, r) => {
  if (r.subresource) return;
  if (r.def.group === '' && r.def.plural === 'pods') {
    if (r.operation === 'CREATE' && r.object) await admitPod(ctx, r.object);
    return;
  }
  if (r.def.group !== 'scheduling.k8s.io' || r.def.plural !== 'priorityclasses') return;
  if (r.operation === 'DELETE') {
    if (SYSTEM_PRIORITY_CLASSES.some((c) => c.name === r.name)) {
      throw forbidden(`priorityclasses.scheduling.k8s.io "${r.name ?? ''}" is forbidden: this is a system priority class and cannot be deleted`);
    }
    return;
  }
  if (r.object?.globalDefault !== true) return;
  const other = (await priorityClasses(ctx)).find((c) => c.globalDefault === true && c.metadata.name !== r.object!.metadata.name);
  if (other) {
    throw forbidden(`priorityclasses.scheduling.k8s.io "${r.object.metadata.name ?? ''}" is forbidden: PriorityClass ${other.metadata.name ?? ''} is already marked as default. Only one default can exist`);
  }
};
