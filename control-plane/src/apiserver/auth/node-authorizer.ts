/**
 * The Node authorizer (k8s.io/kubernetes plugin/pkg/auth/authorizer/node), for users
 * `system:node:<name>` in group `system:nodes`:
 *
 *   secrets, configmaps       get only those a pod bound to the node references (env, envFrom,
 *                             volumes, projected sources, imagePullSecrets) — a node must not read
 *                             bootstrap tokens or other nodes' pods' secrets
 *   serviceaccounts/token     create only for service accounts that pods bound to the node name
 *                             in spec.serviceAccountName (the pod binding itself is checked by
 *                             NodeRestriction admission)
 *   leases                    only its own, in kube-node-lease
 *   anything else             the system:node rules (NODE_RULES) + nodelet's (NODELET_NODE_RULES);
 *                             which objects a write may touch is NodeRestriction's job
 *                             (admission/node-restriction.ts)
 *
 * Upstream walks a graph of pods → referenced objects kept from informers. This looks at the
 * namespace's pods in the server's in-memory pod mirror first (`cachedPods`); only when that
 * finds no relationship does it read the namespace's pods from the store (`listPods`), so a pod
 * bound a moment ago that the mirror has not applied yet is never refused, and a refusal is
 * always the store's answer. Each pod start makes two such requests (the kube-root-ca.crt
 * ConfigMap and a service-account token): reading the store for every one decoded every pod of
 * the namespace twice per pod start, which at 3,000 pods made the server the bottleneck of
 * bench/density (docs/performance.md, "Density").
 */
import type { ApiObject } from '../object.js';
import { NODELET_NODE_RULES, NODE_RULES } from './rbac/bootstrap-roles.js';
import { ruleAllows } from './rbac/policy-rule.js';
import type { Decision, RequestAttributes, UserInfo } from './types.js';
import { NODES_GROUP, NODE_USER_PREFIX } from './types.js';

export interface NodeAuthorizerDeps {
  /** Pods of `namespace` read from the store (the authoritative answer for the reference checks). */
  listPods(namespace: string): Promise<ApiObject[]>;
  /** Pods of `namespace` as the in-memory mirror holds them now (possibly a moment behind the store). */
  cachedPods?(namespace: string): Iterable<ApiObject>;
}

export function nodeNameOf(user: UserInfo): string | undefined {
  return user.groups.includes(NODES_GROUP) && user.name.startsWith(NODE_USER_PREFIX) ? user.name.slice(NODE_USER_PREFIX.length) : undefined;
}

const noRelationship = (node: string, why: string): Decision => ({ allowed: false, reason: `no relationship found between node '${node}' and this object: ${why}` });

export function createNodeAuthorizer(deps: NodeAuthorizerDeps) {
  return async (user: UserInfo, a: RequestAttributes): Promise<Decision | undefined> => {
    const node = nodeNameOf(user);
    if (!node) return undefined;
    if (a.path !== undefined) return undefined;
    const group = a.group ?? '';
    const res = a.resource ?? '';
    if (group === '' && (res === 'secrets' || res === 'configmaps') && !a.subresource) {
      if (a.verb !== 'get' || !a.namespace || !a.name) return { allowed: false, reason: `can only get individual ${res}` };
      const kind = res === 'secrets' ? 'secret' : 'configMap';
      const references = (p: ApiObject): boolean => podReferences(p, kind).has(a.name!);
      return (await someBoundPod(deps, a.namespace, node, references)) ? { allowed: true } : noRelationship(node, `no pod bound to it references ${kind} "${a.name}"`);
    }
    if (group === '' && res === 'serviceaccounts' && a.subresource === 'token') {
      if (a.verb !== 'create' || !a.namespace || !a.name) return { allowed: false, reason: 'can only create tokens for individual service accounts' };
      // Only a pod that names its account links to it, as upstream's graph: a mirror pod names
      // none (NodeRestriction forbids it), so it must not open `default` of its namespace.
      const runsAs = (p: ApiObject): boolean => (p.spec as { serviceAccountName?: string } | undefined)?.serviceAccountName === a.name;
      return (await someBoundPod(deps, a.namespace, node, runsAs))
        ? { allowed: true }
        : noRelationship(node, `no pod bound to it runs as service account "${a.name}"`);
    }
    if (group === 'coordination.k8s.io' && res === 'leases') {
      if (a.namespace !== 'kube-node-lease') return { allowed: false, reason: 'can only access leases in the "kube-node-lease" namespace' };
      // Creates carry no name in the URL: NodeRestriction checks the name in the body.
      if (a.verb !== 'create' && a.name !== node) return { allowed: false, reason: 'can only access the node lease with the same name as the requesting node' };
    }
    if (NODE_RULES.some((r) => ruleAllows(r, a)) || NODELET_NODE_RULES.some((r) => ruleAllows(r, a))) return { allowed: true };
    return undefined;
  };
}

const boundTo = (p: ApiObject, node: string): boolean => (p.spec as { nodeName?: string } | undefined)?.nodeName === node;

/** Whether a pod of `namespace` bound to `node` satisfies `test`: the mirror first, the store when it says no. */
async function someBoundPod(deps: NodeAuthorizerDeps, namespace: string, node: string, test: (p: ApiObject) => boolean): Promise<boolean> {
  if (deps.cachedPods) {
    for (const p of deps.cachedPods(namespace)) if (boundTo(p, node) && test(p)) return true;
  }
  return (await deps.listPods(namespace)).some((p) => boundTo(p, node) && test(p));
}

interface PodSpecRefs {
  containers?: ContainerRefs[];
  initContainers?: ContainerRefs[];
  ephemeralContainers?: ContainerRefs[];
  volumes?: Array<{ secret?: { secretName?: string }; configMap?: { name?: string }; projected?: { sources?: Array<{ secret?: { name?: string }; configMap?: { name?: string } }> } }>;
  imagePullSecrets?: Array<{ name?: string }>;
}
interface ContainerRefs {
  env?: Array<{ valueFrom?: { secretKeyRef?: { name?: string }; configMapKeyRef?: { name?: string } } }>;
  envFrom?: Array<{ secretRef?: { name?: string }; configMapRef?: { name?: string } }>;
}

/** Names of the secrets (or configmaps) a pod references. */
export function podReferences(pod: ApiObject, kind: 'secret' | 'configMap'): Set<string> {
  const spec = (pod.spec ?? {}) as PodSpecRefs;
  const out = new Set<string>();
  const add = (n?: string): void => void (n && out.add(n));
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])]) {
    for (const e of c.env ?? []) add(kind === 'secret' ? e.valueFrom?.secretKeyRef?.name : e.valueFrom?.configMapKeyRef?.name);
    for (const e of c.envFrom ?? []) add(kind === 'secret' ? e.secretRef?.name : e.configMapRef?.name);
  }
  for (const v of spec.volumes ?? []) {
    add(kind === 'secret' ? v.secret?.secretName : v.configMap?.name);
    for (const s of v.projected?.sources ?? []) add(kind === 'secret' ? s.secret?.name : s.configMap?.name);
  }
  if (kind === 'secret') for (const s of spec.imagePullSecrets ?? []) add(s.name);
  return out;
}
