/**
 * Authorization. `system:masters` may do everything. A node identity (`system:node:<n>`,
 * group `system:nodes`) gets a simplified Node authorizer + NodeRestriction:
 *
 *   read (get/list/watch)  nodes, pods, services, endpoints, endpointslices, serviceaccounts,
 *                          namespaces, leases
 *   secrets, configmaps    get by name only, and only those a pod bound to it references
 *                          (env, envFrom, volumes, imagePullSecrets) — as upstream's Node
 *                          authorizer: a node must not read bootstrap tokens or other pods' secrets
 *   nodes, nodes/status    create/update/patch only its own Node
 *   leases                 create/update/patch only kube-node-lease/<n>
 *   pods/status            update/patch of pods bound to it
 *   pods                   delete of pods bound to it
 *   events                 create/update/patch
 *
 * Bootstrap tokens may only exchange themselves for a node credential. Every authenticated user
 * may read discovery, /version and health. Creates carry the name in the body, so
 * {@link restrictCreate} re-checks it after decoding.
 */
import type { ApiObject } from '../object.js';
import { ADMIN_GROUP, BOOTSTRAPPERS_GROUP, NODES_GROUP, NODE_USER_PREFIX, type RequestAttributes, type UserInfo } from './types.js';

export interface AuthorizerDeps {
  getPod(namespace: string, name: string): Promise<ApiObject | undefined>;
  /** Pods of `namespace` (for the secret/configmap reference check). */
  listPods?(namespace: string): Promise<ApiObject[]>;
}

export type Decision = { allowed: true } | { allowed: false; reason: string };

const NODE_READABLE = new Set(['nodes', 'pods', 'services', 'endpoints', 'endpointslices', 'serviceaccounts', 'namespaces', 'leases']);
const READ_VERBS = new Set(['get', 'list', 'watch']);

export function nodeNameOf(user: UserInfo): string | undefined {
  return user.groups.includes(NODES_GROUP) && user.name.startsWith(NODE_USER_PREFIX) ? user.name.slice(NODE_USER_PREFIX.length) : undefined;
}

export const isAdmin = (user: UserInfo): boolean => user.groups.includes(ADMIN_GROUP);

export async function authorize(user: UserInfo, a: RequestAttributes, deps: AuthorizerDeps): Promise<Decision> {
  if (isAdmin(user)) return { allowed: true };
  if (a.path !== undefined) {
    if (a.verb === 'get') return { allowed: true };
    if (a.path === '/apis/nodelet.io/v1/nodecredentials' && a.verb === 'create' && user.groups.includes(BOOTSTRAPPERS_GROUP)) return { allowed: true };
    return deny(user, a);
  }
  // Anyone may ask what they themselves may do (kubectl auth can-i).
  if (a.group === 'authorization.k8s.io' && a.resource === 'selfsubjectaccessreviews' && a.verb === 'create') return { allowed: true };
  const node = nodeNameOf(user);
  // Agents check bearer tokens sent to their node API with a TokenReview (system:auth-delegator).
  if (node && a.group === 'authentication.k8s.io' && a.resource === 'tokenreviews' && a.verb === 'create') return { allowed: true };
  if (!node) return deny(user, a);
  const res = a.resource ?? '';
  const sub = a.subresource;
  if (!sub && READ_VERBS.has(a.verb) && NODE_READABLE.has(res)) return { allowed: true };
  if ((res === 'secrets' || res === 'configmaps') && !sub && a.verb === 'get' && a.namespace && a.name) {
    const pods = (await deps.listPods?.(a.namespace)) ?? [];
    const kind = res === 'secrets' ? 'secret' : 'configMap';
    if (pods.some((p) => (p.spec as { nodeName?: string } | undefined)?.nodeName === node && podReferences(p, kind).has(a.name!))) return { allowed: true };
    return deny(user, a, `no pod bound to node "${node}" references ${kind} "${a.name}"`);
  }
  const writes = a.verb === 'create' || a.verb === 'update' || a.verb === 'patch';
  if (res === 'nodes' && (!sub || sub === 'status') && (writes || a.verb === 'get')) {
    return a.verb === 'create' || a.name === node ? { allowed: true } : deny(user, a, `node "${node}" may only modify its own Node`);
  }
  if (res === 'leases' && !sub && (writes || a.verb === 'get')) {
    if (a.namespace === 'kube-node-lease' && (a.verb === 'create' || a.name === node)) return { allowed: true };
    return deny(user, a, `node "${node}" may only modify its own Lease in kube-node-lease`);
  }
  if (res === 'events' && !sub && (writes || READ_VERBS.has(a.verb))) return { allowed: true };
  if (res === 'pods' && ((sub === 'status' && (a.verb === 'update' || a.verb === 'patch' || a.verb === 'get')) || (!sub && a.verb === 'delete'))) {
    const pod = a.namespace && a.name ? await deps.getPod(a.namespace, a.name) : undefined;
    if (!pod) return { allowed: true }; // let the handler answer 404
    const bound = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
    return bound === node ? { allowed: true } : deny(user, a, `node "${node}" may only modify pods bound to it`);
  }
  return deny(user, a);
}

interface PodSpecRefs {
  containers?: ContainerRefs[];
  initContainers?: ContainerRefs[];
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
  const add = (n?: string) => n && out.add(n);
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
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

/** NodeRestriction for creates, where the name is in the body. */
export function restrictCreate(user: UserInfo, resource: string, obj: ApiObject): Decision {
  const node = nodeNameOf(user);
  if (!node) return { allowed: true };
  if (resource === 'nodes' && obj.metadata.name !== node) return { allowed: false, reason: `node "${node}" is not allowed to create Node "${obj.metadata.name ?? ''}"` };
  if (resource === 'leases' && obj.metadata.name !== node) return { allowed: false, reason: `node "${node}" may only create its own Lease` };
  return { allowed: true };
}

function deny(user: UserInfo, a: RequestAttributes, why?: string): Decision {
  const what = a.path !== undefined
    ? `cannot ${a.verb} path "${a.path}"`
    : `cannot ${a.verb} resource "${a.resource ?? ''}${a.subresource ? '/' + a.subresource : ''}" in API group "${a.group ?? ''}"${a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope'}`;
  return { allowed: false, reason: `User "${user.name}" ${what}${why ? `: ${why}` : ''}` };
}
