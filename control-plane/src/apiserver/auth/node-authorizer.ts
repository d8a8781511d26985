/**
 * The Node authorizer (k8s.io/kubernetes plugin/pkg/auth/authorizer/node), for users
 * `system:node:<name>` in group `system:nodes`:
 *
 *   secrets, configmaps       read only those a pod bound to the node references (env, envFrom,
 *                             volumes, projected sources, imagePullSecrets) — a node must not read
 *                             bootstrap tokens or other nodes' pods' secrets: get by name, or
 *                             list/watch of that one object (fieldSelector metadata.name=<name>)
 *   serviceaccounts/token     create only for service accounts that pods bound to the node name
 *                             in spec.serviceAccountName (the pod binding itself is checked by
 *                             NodeRestriction admission)
 *   persistentvolumeclaims    get only those a pod bound to the node uses (a persistentVolumeClaim
 *                             volume, or an ephemeral volume's `<pod>-<volume>` claim); their
 *                             status update/patch likewise (NodeRestriction then lets only
 *                             status.capacity and status.conditions change)
 *   persistentvolumes         get only those whose spec.claimRef is such a claim
 *   volumeattachments         get only those whose spec.nodeName is the node
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
import { podConfigSources } from '@nodelet/api';
import type { ApiObject, Json } from '../object.js';
import { NODELET_NODE_RULES, NODE_RULES } from './rbac/bootstrap-roles.js';
import { ruleAllows } from './rbac/policy-rule.js';
import type { Decision, RequestAttributes, UserInfo } from './types.js';
import { NODES_GROUP, NODE_USER_PREFIX } from './types.js';

export interface NodeAuthorizerDeps {
  /** Pods of `namespace` read from the store (the authoritative answer for the reference checks). */
  listPods(namespace: string): Promise<ApiObject[]>;
  /** Pods of `namespace` as the in-memory mirror holds them now (possibly a moment behind the store). */
  cachedPods?(namespace: string): Iterable<ApiObject>;
  /** One object from the store (`group` '' for core), undefined when there is none. */
  findObject(group: string, plural: string, namespace: string | undefined, name: string): Promise<ApiObject | undefined>;
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
    if (group === '' && (res === 'secrets' || res === 'configmaps')) {
      const why = readOneNamespaced(a);
      if (why) return { allowed: false, reason: why };
      const kind = res === 'secrets' ? 'secret' : 'configMap';
      const want = res === 'secrets' ? 'secret' : 'configmap';
      const references = (p: ApiObject): boolean => podConfigSources(p).some(([k, n]) => k === want && n === a.name);
      return (await someBoundPod(deps, a.namespace!, node, references)) ? { allowed: true } : noRelationship(node, `no pod bound to it references ${kind} "${a.name}"`);
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
    if (group === '' && res === 'persistentvolumeclaims') {
      const why = a.subresource === 'status' ? statusUpdateOnly(a) : getOnly(a);
      if (why || !a.namespace) return { allowed: false, reason: why ?? 'can only get individual resources of this type' };
      const uses = (p: ApiObject): boolean => podClaims(p).has(a.name!);
      return (await someBoundPod(deps, a.namespace!, node, uses)) ? { allowed: true } : noRelationship(node, `no pod bound to it uses persistentvolumeclaim "${a.name}"`);
    }
    if (group === '' && res === 'persistentvolumes') {
      const why = getOnly(a);
      if (why) return { allowed: false, reason: why };
      const claim = ((await deps.findObject('', 'persistentvolumes', undefined, a.name!))?.spec as Json | undefined)?.claimRef as { namespace?: string; name?: string } | undefined;
      const uses = (p: ApiObject): boolean => podClaims(p).has(claim!.name!);
      return claim?.namespace && claim.name && (await someBoundPod(deps, claim.namespace, node, uses))
        ? { allowed: true }
        : noRelationship(node, `persistentvolume "${a.name}" is not bound to a claim a pod bound to it uses`);
    }
    if (group === 'storage.k8s.io' && res === 'volumeattachments') {
      const why = getOnly(a);
      if (why) return { allowed: false, reason: why };
      const attachment = await deps.findObject('storage.k8s.io', 'volumeattachments', undefined, a.name!);
      return (attachment?.spec as Json | undefined)?.nodeName === node ? { allowed: true } : noRelationship(node, `volumeattachment "${a.name}" is not for it`);
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

/**
 * Why a request is not a read of one namespaced object (upstream authorizeReadNamespacedObject), or
 * undefined: get by name, or list/watch whose field selector requires `metadata.name=<name>` (the
 * request's name then, as upstream's RequestInfo sets it; filters/authorization.ts) — the agent's
 * single-object informers of the ConfigMaps and Secrets its pods use (kubelet's Watch strategy).
 */
function readOneNamespaced(a: RequestAttributes): string | undefined {
  if (a.verb !== 'get' && a.verb !== 'list' && a.verb !== 'watch') return 'can only read resources of this type';
  if (a.subresource) return 'cannot read subresource';
  if (!a.namespace) return 'can only read namespaced object of this type';
  if (!a.name) return 'No Object name found';
  return undefined;
}

/** Why a request is not a get of one object (upstream authorizeGet), or undefined. */
function getOnly(a: RequestAttributes): string | undefined {
  if (a.verb !== 'get' || !a.name) return 'can only get individual resources of this type';
  if (a.subresource) return 'cannot get subresource';
  return undefined;
}

/** Why a request is not a status update or patch of one object (upstream authorizeStatusUpdate), or undefined. */
function statusUpdateOnly(a: RequestAttributes): string | undefined {
  if (a.verb !== 'update' && a.verb !== 'patch') return 'can only get/update/patch this type';
  if (!a.name) return 'can only update individual resources of this type';
  return undefined;
}

/** Names of the PersistentVolumeClaims a pod uses: its claim volumes and its ephemeral volumes' claims. */
export function podClaims(pod: ApiObject): Set<string> {
  const out = new Set<string>();
  const volumes = ((pod.spec as Json | undefined)?.volumes ?? []) as Array<{ name?: string; persistentVolumeClaim?: { claimName?: string }; ephemeral?: unknown }>;
  for (const v of volumes) {
    if (v.persistentVolumeClaim?.claimName) out.add(v.persistentVolumeClaim.claimName);
    else if (v.ephemeral && v.name && pod.metadata.name) out.add(`${pod.metadata.name}-${v.name}`);
  }
  return out;
}

const boundTo = (p: ApiObject, node: string): boolean => (p.spec as { nodeName?: string } | undefined)?.nodeName === node;

/** Whether a pod of `namespace` bound to `node` satisfies `test`: the mirror first, the store when it says no. */
async function someBoundPod(deps: NodeAuthorizerDeps, namespace: string, node: string, test: (p: ApiObject) => boolean): Promise<boolean> {
  if (deps.cachedPods) {
    for (const p of deps.cachedPods(namespace)) if (boundTo(p, node) && test(p)) return true;
  }
  return (await deps.listPods(namespace)).some((p) => boundTo(p, node) && test(p));
}

