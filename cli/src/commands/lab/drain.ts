/**
 * `lab remove-node`'s cluster side: what `kubectl drain` and `kubectl delete node` do, so a
 * removed node's pods are re-created elsewhere and its Node object does not stay Ready (nor its
 * pods Running) until the node lifecycle controller notices the silence.
 *
 *   cordon (spec.unschedulable) ─▶ evict its pods (the Eviction subresource, so disruption
 *   budgets hold; DaemonSet and mirror pods stay, as kubectl drain --ignore-daemonsets) ─▶ wait
 *   until they are gone ─▶ [the caller stops agent and runtime] ─▶ delete the Node
 */
import { AgentError, hasCode, pollUntil } from '@nodelet/base';
import { NODES, PODS, type ApiClient, type Node, type Pod } from '@nodelet/api';

/** The pods a drain evicts: not DaemonSet pods (their controller ignores unschedulable) nor mirror pods. */
function evictable(p: Pod): boolean {
  if (p.metadata?.annotations?.['kubernetes.io/config.mirror']) return false;
  if (p.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet' && o.controller)) return false;
  return p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';
}

async function podsOn(admin: ApiClient, nodeName: string): Promise<Pod[]> {
  return (await admin.list<Pod>(PODS, { fieldSelector: `spec.nodeName=${nodeName}` })).items.filter(evictable);
}

/**
 * Cordons `nodeName` and evicts its pods, waiting up to `timeoutMs` for them to be gone. Resolves
 * with how many it evicted; false when the node does not exist (nothing to drain).
 */
export async function drainNode(admin: ApiClient, nodeName: string, timeoutMs: number): Promise<number | false> {
  try {
    await admin.patch<Node>(NODES, nodeName, { spec: { unschedulable: true } }, { type: 'merge' });
  } catch (err) {
    if (hasCode(err, 'ERR_NOT_FOUND')) return false;
    throw err;
  }
  const pods = await podsOn(admin, nodeName);
  for (const p of pods) {
    const ns = p.metadata?.namespace ?? 'default';
    const name = p.metadata?.name ?? '';
    await pollUntil(`the eviction of pod ${ns}/${name}`, async () => {
      try {
        await admin.create(PODS, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } } as unknown as Pod, { name, subresource: 'eviction', namespace: ns });
      } catch (err) {
        // 429: a disruption budget does not allow it yet; kubectl drain retries the same way.
        if (hasCode(err, 'ERR_NOT_FOUND')) return true;
        if (hasCode(err, 'ERR_UNAVAILABLE')) return false;
        throw err;
      }
      return true;
    }, { timeoutMs, intervalMs: 1_000 });
  }
  await pollUntil(`the pods of node "${nodeName}" to be gone`, async () => (await podsOn(admin, nodeName)).length === 0, {
    timeoutMs, intervalMs: 500,
    detail: async () => `still there: ${(await podsOn(admin, nodeName)).map((p) => `${p.metadata?.namespace}/${p.metadata?.name}`).join(', ')}`,
  });
  return pods.length;
}

/** Deletes the Node object; false when it was not there. */
export async function deleteNode(admin: ApiClient, nodeName: string): Promise<boolean> {
  try {
    await admin.delete(NODES, nodeName);
    return true;
  } catch (err) {
    if (hasCode(err, 'ERR_NOT_FOUND')) return false;
    throw new AgentError('ERR_INTERNAL', `deleting node "${nodeName}": ${(err as Error).message}`);
  }
}
