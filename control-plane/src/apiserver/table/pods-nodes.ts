/** Table printers for pods and nodes, following kubectl's printPod/printNode column semantics. */
import type { ApiObject, Json } from '../object.js';
import { col, get, humanDuration, kindTable, orNone } from './format.js';

interface ContainerStatus {
  name?: string;
  ready?: boolean;
  restartCount?: number;
  state?: { waiting?: { reason?: string }; terminated?: { reason?: string; exitCode?: number; signal?: number }; running?: Json };
  lastState?: { terminated?: { finishedAt?: string } };
}

/** kubectl's pod STATUS: reason, init progress, waiting/terminated reason, Terminating. */
export function podStatusReason(pod: ApiObject): string {
  const status = (pod.status ?? {}) as Json;
  let reason = (status.reason as string | undefined) || (status.phase as string | undefined) || 'Pending';
  const inits = (status.initContainerStatuses ?? []) as ContainerStatus[];
  const initTotal = ((get(pod, 'spec.initContainers') ?? []) as unknown[]).length;
  let initializing = false;
  inits.forEach((c, i) => {
    if (initializing) return;
    const t = c.state?.terminated;
    if (t && t.exitCode === 0) return;
    if (t) reason = t.reason ? `Init:${t.reason}` : t.signal ? `Init:Signal:${t.signal}` : `Init:ExitCode:${t.exitCode}`;
    else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') reason = `Init:${c.state.waiting.reason}`;
    else reason = `Init:${i}/${initTotal}`;
    initializing = true;
  });
  if (!initializing) {
    let hasRunning = false;
    const cs = [...((status.containerStatuses ?? []) as ContainerStatus[])].reverse();
    for (const c of cs) {
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
      else if (c.state?.terminated) reason = c.state.terminated.signal ? `Signal:${c.state.terminated.signal}` : `ExitCode:${c.state.terminated.exitCode}`;
      else if (c.ready && c.state?.running) hasRunning = true;
    }
    if (reason === 'Completed' && hasRunning) reason = hasPodReady(status) ? 'Running' : 'NotReady';
  }
  if (pod.metadata.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

function hasPodReady(status: Json): boolean {
  return ((status.conditions ?? []) as Array<{ type?: string; status?: string }>).some((c) => c.type === 'Ready' && c.status === 'True');
}

export const POD_TABLE = kindTable({
  columns: [
    col('Ready', 'The aggregate readiness state of this pod for accepting traffic.'),
    col('Status', 'The aggregate status of the containers in this pod.'),
    col('Restarts', 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.'),
  ],
  afterAge: [
    col('IP', 'IP address allocated to the pod. Routable at least within the cluster.', 1),
    col('Node', 'Name of the Node this pod is bound to.', 1),
    col('Nominated Node', 'Name of the node nominated by the scheduler, if any.', 1),
    col('Readiness Gates', 'Pod readiness gates, if any.', 1),
  ],
  cells(pod, now) {
    const status = (pod.status ?? {}) as Json;
    const total = ((get(pod, 'spec.containers') ?? []) as unknown[]).length;
    const cs = (status.containerStatuses ?? []) as ContainerStatus[];
    const ready = cs.filter((c) => c.ready).length;
    let restarts = 0;
    let lastRestart = 0;
    for (const c of cs) {
      restarts += c.restartCount ?? 0;
      const fin = c.lastState?.terminated?.finishedAt;
      if (fin) lastRestart = Math.max(lastRestart, Date.parse(fin));
    }
    const restartCell = restarts > 0 && lastRestart > 0 ? `${restarts} (${humanDuration(now - lastRestart)} ago)` : restarts;
    const gates = (get(pod, 'spec.readinessGates') ?? []) as Array<{ conditionType?: string }>;
    const conds = (status.conditions ?? []) as Array<{ type?: string; status?: string }>;
    const gateCell = gates.length
      ? `${gates.filter((g) => conds.some((c) => c.type === g.conditionType && c.status === 'True')).length}/${gates.length}`
      : '<none>';
    return [`${ready}/${total}`, podStatusReason(pod), restartCell, orNone(status.podIP), orNone(get(pod, 'spec.nodeName')), orNone(status.nominatedNodeName), gateCell];
  },
});

export function nodeStatusText(node: ApiObject): string {
  const conds = (get(node, 'status.conditions') ?? []) as Array<{ type?: string; status?: string }>;
  const ready = conds.find((c) => c.type === 'Ready');
  // kubectl's printer: any Ready status but True (False or Unknown) reads NotReady; Unknown only
  // when the node has no Ready condition at all.
  const parts = [!ready ? 'Unknown' : ready.status === 'True' ? 'Ready' : 'NotReady'];
  if (get(node, 'spec.unschedulable') === true) parts.push('SchedulingDisabled');
  return parts.join(',');
}

export function nodeRoles(node: ApiObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && v) roles.add(v);
  }
  return roles.size ? [...roles].sort().join(',') : '<none>';
}

function nodeAddress(node: ApiObject, type: string): string {
  const addrs = (get(node, 'status.addresses') ?? []) as Array<{ type?: string; address?: string }>;
  return orNone(addrs.find((a) => a.type === type)?.address);
}

export const NODE_TABLE = kindTable({
  columns: [col('Status', 'The status of the node'), col('Roles', 'The roles of the node')],
  afterAge: [
    col('Version', 'Kubelet Version reported by the node.'),
    col('Internal-IP', 'List of internal IPs.', 1),
    col('External-IP', 'List of external IPs.', 1),
    col('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', 1),
    col('Kernel-Version', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", 1),
    col('Container-Runtime', 'Container Runtime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).', 1),
  ],
  cells(node) {
    return [
      nodeStatusText(node),
      nodeRoles(node),
      orNone(get(node, 'status.nodeInfo.kubeletVersion')),
      nodeAddress(node, 'InternalIP'),
      nodeAddress(node, 'ExternalIP'),
      orNone(get(node, 'status.nodeInfo.osImage')),
      orNone(get(node, 'status.nodeInfo.kernelVersion')),
      orNone(get(node, 'status.nodeInfo.containerRuntimeVersion')),
    ];
  },
});
