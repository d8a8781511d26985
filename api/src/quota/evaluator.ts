/**
 * What an object counts against a ResourceQuota (upstream pkg/quota/v1/evaluator/core): the usage
 * of pods (compute requests and limits, `pods`), services (`services.nodeports`,
 * `services.loadbalancers`), PersistentVolumeClaims (`requests.storage`, per storage class) and
 * `count/<resource>.<group>` of every kind; which quotas match an object (scopes and the
 * PriorityClass scope selector: pods only); and the requests or limits a pod must set when a
 * quota constrains them. Admission and the quota controller both count with this module.
 */
import { parseQuantityMilli } from '../quantity.js';
import { podQOSClass } from '../qos.js';
import type { PodSpec } from '../types/pod.js';
import type { ResourceQuota, ScopedResourceSelectorRequirement } from '../types/quota.js';
import { addLists, maskList, type ResourceList } from './resource-list.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const objOf = (v: unknown): Obj => (isObj(v) ? v : {});

/** The kinds whose count has a legacy name besides `count/<plural>` (core group only). */
const LEGACY_COUNTS = new Set(['pods', 'services', 'secrets', 'configmaps', 'persistentvolumeclaims', 'resourcequotas', 'replicationcontrollers']);
/** Compute resources that have a bare name meaning the request (`cpu` = `requests.cpu`), and a `limits.` one. */
const COMPUTE = ['cpu', 'memory', 'ephemeral-storage'];
const STORAGE_CLASS_SUFFIX = '.storageclass.storage.k8s.io/';

/** `count/pods`, `count/deployments.apps`. */
export function objectCountName(group: string, plural: string): string {
  return group === '' ? `count/${plural}` : `count/${plural}.${group}`;
}

/** Upstream QuotaV1Pod: terminal pods, and pods past their deletion grace, use no compute or `pods`. */
export function podCountsForQuota(pod: Obj, nowMs: number): boolean {
  const phase = objOf(pod.status).phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const meta = objOf(pod.metadata);
  if (typeof meta.deletionTimestamp === 'string' && typeof meta.deletionGracePeriodSeconds === 'number') {
    return nowMs <= Date.parse(meta.deletionTimestamp) + meta.deletionGracePeriodSeconds * 1000;
  }
  return true;
}

interface ContainerLike {
  name?: string;
  restartPolicy?: string;
  resources?: { requests?: ResourceList; limits?: ResourceList };
}

/** Max of two lists, key by key. */
function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a };
  for (const [k, v] of Object.entries(b)) if (a[k] === undefined || parseQuantityMilli(v) > parseQuantityMilli(a[k])) out[k] = v;
  return out;
}

/**
 * A pod's effective requests or limits (upstream resourcehelper.PodRequests/PodLimits): the sum of
 * its containers and sidecars, at least each plain init container's, plus the overhead (on limits:
 * only those set).
 */
export function podResources(spec: PodSpec | undefined, which: 'requests' | 'limits'): ResourceList {
  let sum: ResourceList = {};
  for (const c of (spec?.containers ?? []) as ContainerLike[]) sum = addLists(sum, c.resources?.[which] ?? {});
  let initMax: ResourceList = {};
  let sidecars: ResourceList = {};
  for (const c of (spec?.initContainers ?? []) as ContainerLike[]) {
    const r = c.resources?.[which] ?? {};
    if (c.restartPolicy === 'Always') {
      sidecars = addLists(sidecars, r);
      sum = addLists(sum, r);
    } else {
      initMax = maxLists(initMax, addLists(r, sidecars));
    }
  }
  const total = maxLists(sum, initMax);
  if (!spec?.overhead) return total;
  // Overhead adds to every request, but only to limits the containers set (no limit stays unlimited).
  const overhead = spec.overhead as ResourceList;
  return addLists(total, which === 'requests' ? overhead : maskList(overhead, Object.keys(total)));
}

/** The usage a pod counts (upstream PodUsageFunc). */
export function podUsage(pod: Obj, nowMs: number): ResourceList {
  const out: ResourceList = { 'count/pods': '1' };
  if (!podCountsForQuota(pod, nowMs)) return out;
  out.pods = '1';
  const spec = pod.spec as PodSpec | undefined;
  for (const [k, v] of Object.entries(podResources(spec, 'requests'))) {
    out[`requests.${k}`] = v;
    if (COMPUTE.includes(k)) out[k] = v;
  }
  for (const [k, v] of Object.entries(podResources(spec, 'limits'))) if (COMPUTE.includes(k)) out[`limits.${k}`] = v;
  return out;
}

/** The usage an object of `group`/`plural` counts. */
export function objectUsage(group: string, plural: string, obj: Obj, nowMs: number): ResourceList {
  if (group === '' && plural === 'pods') return podUsage(obj, nowMs);
  const out: ResourceList = { [objectCountName(group, plural)]: '1' };
  if (group !== '' || !LEGACY_COUNTS.has(plural)) return out;
  out[plural] = '1';
  const spec = objOf(obj.spec);
  if (plural === 'services') {
    const ports = Array.isArray(spec.ports) ? spec.ports.length : 0;
    if (spec.type === 'LoadBalancer') {
      out['services.loadbalancers'] = '1';
      if (spec.allocateLoadBalancerNodePorts !== false) out['services.nodeports'] = String(ports);
    } else if (spec.type === 'NodePort') {
      out['services.nodeports'] = String(ports);
    }
  } else if (plural === 'persistentvolumeclaims') {
    const storage = objOf(objOf(spec.resources).requests).storage;
    const cls = typeof spec.storageClassName === 'string' ? spec.storageClassName : '';
    if (cls) out[`${cls}${STORAGE_CLASS_SUFFIX}persistentvolumeclaims`] = '1';
    if (typeof storage === 'string') {
      out['requests.storage'] = storage;
      if (cls) out[`${cls}${STORAGE_CLASS_SUFFIX}requests.storage`] = storage;
    }
  }
  return out;
}

/** Whether quota resource `name` is one a pod's usage can have (upstream podResources/isExtendedResource). */
export function isPodResource(name: string): boolean {
  return name === 'pods' || name === 'count/pods' || COMPUTE.includes(name) || name.startsWith('requests.') || name.startsWith('limits.') || name.startsWith('hugepages-');
}

/** The scope selector's expressions, `scopes` included (as Exists), upstream's getScopeSelectorsFromQuota. */
export function quotaScopeRequirements(q: ResourceQuota): ScopedResourceSelectorRequirement[] {
  const out: ScopedResourceSelectorRequirement[] = (q.spec?.scopes ?? []).map((s) => ({ scopeName: s, operator: 'Exists' }));
  return [...out, ...(q.spec?.scopeSelector?.matchExpressions ?? [])];
}

function podMatchesScope(pod: Obj, r: ScopedResourceSelectorRequirement): boolean {
  const spec = objOf(pod.spec);
  switch (r.scopeName) {
    case 'Terminating':
      return typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0;
    case 'NotTerminating':
      return !(typeof spec.activeDeadlineSeconds === 'number' && spec.activeDeadlineSeconds >= 0);
    case 'BestEffort':
      return podQOSClass(spec as unknown as PodSpec) === 'BestEffort';
    case 'NotBestEffort':
      return podQOSClass(spec as unknown as PodSpec) !== 'BestEffort';
    case 'PriorityClass': {
      const name = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
      if (r.operator === 'Exists') return name !== '';
      if (r.operator === 'DoesNotExist') return name === '';
      const listed = (r.values ?? []).includes(name);
      return r.operator === 'In' ? listed : !listed;
    }
    default:
      return false;
  }
}

/**
 * The hard resources of quota `q` an object of `group`/`plural` is charged for: none when the
 * quota's scopes do not match it (scoped quotas count pods only) or it uses none of them.
 */
export function matchingResources(q: ResourceQuota, group: string, plural: string, obj: Obj): string[] {
  const hard = Object.keys(q.status?.hard ?? q.spec?.hard ?? {});
  const isPod = group === '' && plural === 'pods';
  const scopes = quotaScopeRequirements(q);
  if (scopes.length) {
    if (!isPod || !scopes.every((s) => podMatchesScope(obj, s))) return [];
    // A BestEffort pod uses no compute: the scope limits the quota to the pod count.
    const bestEffort = scopes.some((s) => s.scopeName === 'BestEffort');
    return hard.filter((n) => (bestEffort ? n === 'pods' || n === 'count/pods' : isPodResource(n)));
  }
  if (isPod) return hard.filter(isPodResource);
  const usage = objectUsage(group, plural, obj, 0);
  return hard.filter((n) => n in usage || (group === '' && plural === 'services' && n.startsWith('services.')) || (plural === 'persistentvolumeclaims' && (n === 'requests.storage' || n.includes(STORAGE_CLASS_SUFFIX))));
}

/** Resources whose requests or limits a pod's containers must set when a quota constrains them. */
const REQUIRED: Record<string, { which: 'requests' | 'limits'; name: string }> = {
  cpu: { which: 'requests', name: 'cpu' },
  memory: { which: 'requests', name: 'memory' },
  'requests.cpu': { which: 'requests', name: 'cpu' },
  'requests.memory': { which: 'requests', name: 'memory' },
  'limits.cpu': { which: 'limits', name: 'cpu' },
  'limits.memory': { which: 'limits', name: 'memory' },
};

/**
 * Upstream's pod Constraints: for each constrained compute resource the containers (and init
 * containers) that do not set it, as `must specify limits.cpu for: a,b; requests.memory for: a`;
 * undefined when nothing is missing.
 */
export function podConstraintProblem(pod: Obj, constrained: readonly string[]): string | undefined {
  const spec = objOf(pod.spec) as unknown as PodSpec;
  const containers = [...((spec.initContainers ?? []) as ContainerLike[]), ...((spec.containers ?? []) as ContainerLike[])];
  const missing: string[] = [];
  for (const name of [...constrained].sort()) {
    const need = REQUIRED[name];
    if (!need) continue;
    const lacking = containers.filter((c) => c.resources?.[need.which]?.[need.name] === undefined).map((c) => c.name ?? '');
    if (lacking.length) missing.push(`${name} for: ${lacking.join(',')}`);
  }
  return missing.length ? `must specify ${missing.join('; ')}` : undefined;
}

/** The usage of `objects` summed over the names in `names`. */
export function sumUsage(group: string, plural: string, objects: readonly Obj[], q: ResourceQuota, names: readonly string[], nowMs: number): ResourceList {
  let total: ResourceList = {};
  for (const o of objects) {
    const matched = matchingResources(q, group, plural, o);
    if (matched.length) total = addLists(total, maskList(objectUsage(group, plural, o, nowMs), matched.filter((n) => names.includes(n))));
  }
  return total;
}

/**
 * Which kinds (group, plural) a quota's hard resources count: `pods` and compute → pods,
 * `services.*` → services, `count/x.g` → x in g, and so on.
 */
export function countedKinds(hard: readonly string[]): Array<{ group: string; plural: string }> {
  const out = new Map<string, { group: string; plural: string }>();
  const add = (group: string, plural: string): void => void out.set(`${group}/${plural}`, { group, plural });
  for (const n of hard) {
    if (n.startsWith('count/')) {
      const rest = n.slice('count/'.length);
      const dot = rest.indexOf('.');
      add(dot < 0 ? '' : rest.slice(dot + 1), dot < 0 ? rest : rest.slice(0, dot));
    } else if (isPodResource(n)) add('', 'pods');
    else if (n === 'services' || n.startsWith('services.')) add('', 'services');
    else if (n === 'persistentvolumeclaims' || n === 'requests.storage' || n.includes(STORAGE_CLASS_SUFFIX)) add('', 'persistentvolumeclaims');
    else if (LEGACY_COUNTS.has(n)) add('', n);
  }
  return [...out.values()];
}
