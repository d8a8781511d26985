/**
 * PodSecurity on namespace writes: the warning for labels on an exempt namespace, and the
 * existing pods a stricter enforce level would refuse (upstream EvaluatePodsInNamespace) —
 * at most 3000 pods or one second, one pod per controller first, pods with the same violations
 * folded into one line.
 */
import type { ServerContext } from '../../context.js';
import { isPlainObject, type ApiObject } from '../../object.js';
import { podMetaOf } from './check.js';
import type { PodSecurityConfig } from './config.js';
import { allowed, evaluatePod, forbiddenReason } from './evaluator.js';
import { equivalent, formatLevelVersion, fullyPrivileged, LABEL_PREFIX, MODES, type LevelVersion, type Policy } from './policy.js';

const MAX_PODS_TO_CHECK = 3000;
const POD_CHECK_TIMEOUT_MS = 1000;

/**
 * `namespace "x" is exempt from Pod Security, and the policy (enforce=…, warn=…) will be ignored`,
 * naming the non-privileged modes the labels set; undefined when there is nothing to say.
 */
export function exemptNamespaceWarning(name: string, policy: Policy, defaults: Policy, labels: Record<string, string> | undefined): string | undefined {
  if (fullyPrivileged(policy) || MODES.every((m) => equivalent(policy[m], defaults[m]))) return undefined;
  const parts = MODES.filter((m) => policy[m].level !== 'privileged' && (labels?.[LABEL_PREFIX + m] !== undefined || labels?.[`${LABEL_PREFIX}${m}-version`] !== undefined)).map(
    (m) => `${m}=${formatLevelVersion(policy[m])}`,
  );
  return `namespace "${name}" is exempt from Pod Security, and the policy (${parts.join(', ')}) will be ignored`;
}

const controllerUid = (pod: ApiObject): string | undefined => (pod.metadata.ownerReferences ?? []).find((o) => o.controller === true)?.uid;

/** Pods not exempt by runtime class: the first of each controller first, then the rest. */
function prioritize(cfg: PodSecurityConfig, pods: ApiObject[]): ApiObject[] {
  const first: ApiObject[] = [];
  const rest: ApiObject[] = [];
  const seen = new Set<string>();
  for (const pod of pods) {
    const rc = (pod.spec as { runtimeClassName?: unknown } | undefined)?.runtimeClassName;
    if (typeof rc === 'string' && rc !== '' && cfg.exemptions.runtimeClasses.has(rc)) continue;
    const uid = controllerUid(pod);
    if (uid !== undefined && seen.has(uid)) {
      rest.push(pod);
      continue;
    }
    if (uid !== undefined) seen.add(uid);
    first.push(pod);
  }
  return [...first, ...rest];
}

/** The warnings for a namespace whose enforce level became `enforce`. */
export async function checkNamespacePods(ctx: ServerContext, cfg: PodSecurityConfig, namespace: string, enforce: LevelVersion): Promise<string[]> {
  const deadline = ctx.now() + POD_CHECK_TIMEOUT_MS;
  let pods: ApiObject[];
  try {
    pods = (await ctx.resource('', 'v1', 'pods')!.registry.list({ namespace, filter: () => true })).items;
  } catch (err) {
    ctx.logger.warn({ err, namespace }, 'Listing pods for a new PodSecurity enforce level failed');
    return ['failed to list pods while checking new PodSecurity enforce level'];
  }
  const ordered = prioritize(cfg, pods);
  const total = ordered.length;
  let checked = 0;
  const byWarning = new Map<string, { podName: string; count: number }>();
  for (const pod of ordered.slice(0, MAX_PODS_TO_CHECK)) {
    checked++;
    const v = evaluatePod(enforce, podMetaOf(pod.metadata), isPlainObject(pod.spec) ? pod.spec : {});
    if (!allowed(v)) {
      const text = forbiddenReason(v);
      const name = pod.metadata.name ?? '';
      const c = byWarning.get(text);
      if (!c) byWarning.set(text, { podName: name, count: 1 });
      else {
        c.count++;
        if (name < c.podName) c.podName = name;
      }
    }
    if (ctx.now() > deadline) break;
  }
  const warnings: string[] = [];
  if (checked < total) warnings.push(`new PodSecurity enforce level only checked against the first ${checked} of ${total} existing pods`);
  if (byWarning.size) warnings.push(`existing pods in namespace "${namespace}" violate the new PodSecurity enforce level "${formatLevelVersion(enforce)}"`);
  const podLines = [...byWarning].map(([text, c]) =>
    c.count === 1 ? `${c.podName}: ${text}` : c.count === 2 ? `${c.podName} (and 1 other pod): ${text}` : `${c.podName} (and ${c.count - 1} other pods): ${text}`,
  );
  return [...warnings, ...podLines.sort()];
}
