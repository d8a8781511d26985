/**
 * NodeRestriction (upstream plugin/pkg/admission/noderestriction): what a node identity
 * (`system:node:<name>`) may change, beyond what the Node authorizer lets it call at all.
 *
 *   pods             create mirror pods only (annotation kubernetes.io/config.mirror, bound to
 *                    itself, owned by its Node, referencing no secrets/configmaps/service
 *                    account/PVCs); delete only pods bound to itself
 *   pods/status      only pods bound to itself, and never their labels or annotations (labels
 *                    steer Service traffic; nodelet also freezes annotations)
 *   pods/eviction    only pods bound to itself
 *   nodes            only its own Node; no labels under node-restriction.kubernetes.io/ nor
 *                    kubernetes.io/k8s.io labels outside the kubelet's set (node-role… included);
 *                    taints only at create; spec.podCIDR(s) never (the IPAM controller's job)
 *   leases           only kube-node-lease/<itself>
 *   persistentvolumeclaims/status  only status.capacity and status.conditions change (the Node
 *                    authorizer already confined it to claims its pods use)
 *   serviceaccounts/token  only bound to a pod (name and uid) running on itself
 */
import { podConfigSources } from '@nodelet/api';
import type { Json } from '../object.js';
import { isPlainObject, jsonEqual, type ApiObject } from '../object.js';
import { nodeNameOf } from '../auth/node-authorizer.js';
import { forbidden, notFound } from '../status.js';
import { findForCheck } from '../mirror.js';
import type { AdmissionPlugin, AdmissionRequest } from './types.js';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** Labels a kubelet may set on its Node (k8s.io/kubelet/pkg/apis IsKubeletLabel). */
const KUBELET_LABELS = new Set([
  'kubernetes.io/hostname', 'kubernetes.io/arch', 'kubernetes.io/os',
  'beta.kubernetes.io/arch', 'beta.kubernetes.io/os', 'beta.kubernetes.io/instance-type', 'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region', 'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region', 'topology.kubernetes.io/zone',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (ns: string, base: string): boolean => ns === base || ns.endsWith(`.${base}`);

function isKubeletLabel(key: string): boolean {
  return KUBELET_LABELS.has(key) || KUBELET_LABEL_NAMESPACES.some((b) => inNamespace(labelNamespace(key), b));
}

/** Labels a node may not add, remove or change (upstream getForbiddenLabels). */
export function forbiddenNodeLabels(next: Record<string, string> | undefined, prev: Record<string, string> | undefined): string[] {
  const a = next ?? {};
  const b = prev ?? {};
  const modified = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) modified.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) modified.add(k);
  const out: string[] = [];
  for (const key of modified) {
    const ns = labelNamespace(key);
    const restricted = inNamespace(ns, 'node-restriction.kubernetes.io');
    const kubernetesLabel = inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io');
    if (restricted || (kubernetesLabel && !isKubeletLabel(key))) out.push(key);
  }
  return out.sort();
}

export const nodeRestriction: AdmissionPlugin = async (ctx, r) => {
  const node = nodeNameOf(r.user);
  if (!node) return;
  const { def } = r;
  const refuse = (why: string): never => {
    throw forbidden(`${def.plural}${def.group ? '.' + def.group : ''} "${r.name ?? ''}" is forbidden: ${why}`);
  };
  if (def.group === '' && def.plural === 'pods') return admitPod(ctx, r, node, refuse);
  if (def.group === '' && def.plural === 'nodes') return admitNode(r, node, refuse);
  if (def.group === 'coordination.k8s.io' && def.plural === 'leases') {
    if (r.namespace !== 'kube-node-lease') refuse('can only access leases in the "kube-node-lease" system namespace');
    if (r.name !== node) refuse('can only access node lease with the same name as the requesting node');
    return;
  }
  if (def.group === '' && def.plural === 'persistentvolumeclaims' && r.subresource === 'status') return admitClaimStatus(r, node, refuse);
  if (def.group === '' && def.plural === 'serviceaccounts' && r.subresource === 'token' && r.operation === 'CREATE') {
    const ref = (r.object?.spec as Json | undefined)?.boundObjectRef as { apiVersion?: string; kind?: string; name?: string; uid?: string } | undefined;
    if (!ref || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) refuse('node requested token not bound to a pod');
    if (!ref!.uid) refuse('node requested token with a pod binding without a uid');
    const pod = await findForCheck(ctx, ctx.resource('', 'v1', 'pods')!, r.namespace, ref!.name!, (p) => p.metadata.uid === ref!.uid && (p.spec as Json | undefined)?.nodeName === node);
    if (!pod) throw notFound('pods', '', ref!.name!);
    if (pod.metadata.uid !== ref!.uid) refuse(`the UID in the bound object reference (${ref!.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    if ((pod.spec as Json | undefined)?.nodeName !== node) refuse('node requested token bound to a pod scheduled on a different node');
  }
};

async function admitPod(ctx: Parameters<AdmissionPlugin>[0], r: AdmissionRequest, node: string, refuse: (why: string) => never): Promise<void> {
  const boundTo = (p: ApiObject | undefined): unknown => (p?.spec as Json | undefined)?.nodeName;
  if (r.subresource === 'status') {
    if (r.operation !== 'UPDATE') refuse(`unexpected operation "${r.operation}"`);
    if (boundTo(r.oldObject) !== node) refuse(`node "${node}" can only update pod status for pods with spec.nodeName set to itself`);
    if (!jsonEqual(r.object?.metadata.labels ?? {}, r.oldObject?.metadata.labels ?? {})) refuse(`node "${node}" cannot update labels through pod status`);
    if (!jsonEqual(r.object?.metadata.annotations ?? {}, r.oldObject?.metadata.annotations ?? {})) refuse(`node "${node}" cannot update annotations through pod status`);
    return;
  }
  if (r.subresource === 'eviction') {
    const pod = await ctx.resource('', 'v1', 'pods')!.registry.get(r.namespace, r.name!);
    if (boundTo(pod) !== node) refuse(`node ${node} can only evict pods with spec.nodeName set to itself`);
    return;
  }
  if (r.subresource) refuse(`unexpected pod subresource "${r.subresource}", only 'status' and 'eviction' are allowed`);
  if (r.operation === 'DELETE') {
    if (boundTo(r.oldObject) !== node) refuse(`node "${node}" can only delete pods with spec.nodeName set to itself`);
    return;
  }
  if (r.operation !== 'CREATE') refuse(`unexpected operation "${r.operation}", node "${node}" can only create and delete mirror pods`);
  const pod = r.object!;
  if (pod.metadata.annotations?.[MIRROR_POD_ANNOTATION] === undefined) refuse(`pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
  if (boundTo(pod) !== node) refuse(`node "${node}" can only create pods with spec.nodeName set to itself`);
  const owners = pod.metadata.ownerReferences ?? [];
  if (owners.length !== 1) refuse(`node "${node}" can only create pods with ${owners.length ? 'a single owner reference' : 'an owner reference'} set to itself`);
  const owner = owners[0]!;
  if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== node) refuse(`node "${node}" can only create pods with an owner reference set to itself`);
  if (owner.controller !== true) refuse(`node "${node}" can only create pods with a controller owner reference set to itself`);
  if (owner.blockOwnerDeletion === true) refuse(`node "${node}" must not set blockOwnerDeletion on an owner reference`);
  const nodeObj = await ctx.resource('', 'v1', 'nodes')!.registry.get(undefined, node);
  if (owner.uid !== nodeObj.metadata.uid) refuse(`node ${node} UID mismatch: expected ${String(nodeObj.metadata.uid)} got ${String(owner.uid)}`);
  const spec = (pod.spec ?? {}) as Json;
  if (spec.serviceAccountName) refuse(`node "${node}" can not create pods that reference a service account`);
  const sources = podConfigSources(pod);
  if (sources.some(([k]) => k === 'secret')) refuse(`node "${node}" can not create pods that reference secrets`);
  if (sources.some(([k]) => k === 'configmap')) refuse(`node "${node}" can not create pods that reference configmaps`);
  // An ephemeral volume's claim is `<pod>-<volume>`: a mirror pod named to match would open an existing claim.
  if (((spec.volumes ?? []) as Json[]).some((v) => isPlainObject(v) && (v.persistentVolumeClaim || v.ephemeral))) refuse(`node "${node}" can not create pods that reference persistentvolumeclaims`);
}

function admitNode(r: AdmissionRequest, node: string, refuse: (why: string) => never): void {
  if (r.name !== node) refuse(`node "${node}" is not allowed to modify node "${r.name ?? ''}"`);
  if (r.operation === 'DELETE') return;
  const next = r.object!;
  const spec = (next.spec ?? {}) as Json;
  const oldSpec = (r.oldObject?.spec ?? {}) as Json;
  if (r.operation === 'CREATE') {
    const bad = forbiddenNodeLabels(next.metadata.labels, undefined);
    if (bad.length) refuse(`node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    if (spec.podCIDR || (Array.isArray(spec.podCIDRs) && spec.podCIDRs.length)) refuse(`node "${node}" is not allowed to set spec.podCIDR: the node IPAM controller assigns it`);
    return;
  }
  if (!jsonEqual(spec.taints ?? [], oldSpec.taints ?? [])) refuse(`node "${node}" is not allowed to modify taints`);
  const bad = forbiddenNodeLabels(next.metadata.labels, r.oldObject?.metadata.labels);
  if (bad.length) refuse(`is not allowed to modify labels: ${bad.join(', ')}`);
  if ((spec.podCIDR ?? '') !== (oldSpec.podCIDR ?? '') || !jsonEqual(spec.podCIDRs ?? [], oldSpec.podCIDRs ?? [])) {
    refuse(`node "${node}" is not allowed to modify spec.podCIDR: the node IPAM controller assigns it`);
  }
}

/**
 * A node's PVC status write (upstream admitPVCStatus): what a kubelet reports after resizing a
 * filesystem — status.capacity and status.conditions — and nothing else, so a node cannot mark a
 * claim Bound or Lost, nor relabel or re-own it. resourceVersion and managedFields are the
 * server's bookkeeping and not compared.
 */
function admitClaimStatus(r: AdmissionRequest, node: string, refuse: (why: string) => never): void {
  if (r.operation !== 'UPDATE') refuse(`unexpected operation "${r.operation}"`);
  const comparable = (o: ApiObject | undefined): Json => {
    const { resourceVersion: _rv, managedFields: _mf, ...metadata } = (o?.metadata ?? {}) as Json;
    const { capacity: _c, conditions: _k, ...status } = (o?.status ?? {}) as Json;
    return { ...(o as Json), metadata, status };
  };
  const next = comparable(r.object);
  const prev = comparable(r.oldObject);
  const changed = [...new Set([...Object.keys(next), ...Object.keys(prev)])]
    .flatMap((k) => (isPlainObject(next[k]) || isPlainObject(prev[k])
      ? [...new Set([...Object.keys((next[k] ?? {}) as Json), ...Object.keys((prev[k] ?? {}) as Json)])].map((f) => [k, f])
      : [[k]]))
    .filter((path) => !jsonEqual(dig(next, path), dig(prev, path)))
    .map((path) => path.join('.'));
  if (changed.length) refuse(`node "${node}" is not allowed to update fields other than status.capacity and status.conditions: ${changed.sort().join(', ')}`);
}

const dig = (o: Json, path: string[]): unknown => path.reduce<unknown>((v, k) => (isPlainObject(v) ? (v as Json)[k] : undefined), o);
