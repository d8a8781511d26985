/**
 * The nodes table: Ready, allocatable and capacity, pods, the pressure conditions that are True
 * (all from the node watch), the age of each node's Lease renewal and `kubectl top node`'s figures.
 * The Leases in kube-node-lease are watched (each renewal is an event); the NodeMetrics are
 * listed every few seconds, as metrics.k8s.io serves no watch.
 */
import type { Api } from './api.js';
import { useNow, usePoll, useWatch } from './hooks.js';
import { age, byName, nodeProblems, nodeReady, topFigures, type Lease, type Node, type NodeMetrics, type Pod } from './k8s.js';
import { Panel } from './panel.js';
import { VirtualTable } from './virtual.js';

/** How often the metrics are listed again (metrics-server scrapes every 15 s). */
const POLL_MS = 5000;

export function Nodes(props: { api: Api; pods: Pod[] }) {
  const nodes = useWatch<Node>(props.api, '/api/v1/nodes');
  const leases = useWatch<Lease>(props.api, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases');
  const metrics = usePoll<NodeMetrics>(props.api, '/apis/metrics.k8s.io/v1beta1/nodes', POLL_MS);
  const leaseOf = new Map(leases.items.map((l) => [l.metadata.name, l]));
  const usageOf = new Map(metrics.items.map((m) => [m.metadata.name, m.usage]));
  const podsOn = new Map<string, number>();
  for (const p of props.pods) if (p.spec?.nodeName) podsOn.set(p.spec.nodeName, (podsOn.get(p.spec.nodeName) ?? 0) + 1);
  const sorted = nodes.items.sort(byName);
  return (
    <Panel id="nodes" title={`Nodes (${sorted.length})`} error={nodes.error}>
      {(leases.error || metrics.error) && (
        <p class="hint" id="nodes-extra-error">
          {leases.error && `Leases: ${leases.error}. `}
          {metrics.error && `Metrics: ${metrics.error}.`}
        </p>
      )}
      <VirtualTable
        items={sorted}
        columns={9}
        label="Nodes"
        maxRows={10}
        head={
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Ready</th>
            <th scope="col">Lease renewed</th>
            <th scope="col" title="allocatable / capacity">CPU alloc. / cap.</th>
            <th scope="col" title="allocatable / capacity">Memory alloc. / cap.</th>
            <th scope="col" title="kubectl top node: used, and its share of allocatable">CPU used</th>
            <th scope="col" title="kubectl top node: used, and its share of allocatable">Memory used</th>
            <th scope="col">Pods</th>
            <th scope="col">Conditions</th>
          </tr>
        }
        row={(n, i) => {
          const name = n.metadata.name ?? '';
          const ready = nodeReady(n);
          const a = n.status?.allocatable ?? {};
          const c = n.status?.capacity ?? {};
          const lease = leaseOf.get(name);
          const usage = usageOf.get(name);
          const top = usage && topFigures(usage, a);
          return (
            <tr key={name} data-node={name} aria-rowindex={i + 2}>
              <th scope="row">{name}</th>
              <td class={ready === 'True' ? 'ok' : 'bad'} data-ready={ready}>
                {ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown'}
              </td>
              <td data-lease-age={lease ? 'yes' : 'no'} title={lease?.spec?.renewTime}>
                {lease ? <Ago iso={lease.spec?.renewTime} /> : '–'}
              </td>
              <td>
                {a.cpu ?? '?'} / {c.cpu ?? '?'}
              </td>
              <td>
                {a.memory ?? '?'} / {c.memory ?? '?'}
              </td>
              <td data-top-cpu={top?.cpu ?? ''}>{top ? `${top.cpu} (${top.cpuPercent})` : '–'}</td>
              <td data-top-memory={top?.memory ?? ''}>{top ? `${top.memory} (${top.memoryPercent})` : '–'}</td>
              <td>
                {podsOn.get(name) ?? 0} / {a.pods ?? '?'}
              </td>
              <td>{nodeProblems(n).join(', ') || 'none'}</td>
            </tr>
          );
        }}
      />
    </Panel>
  );
}

/** "<age> ago", counting on between the Lease's renewals (its own clock: only these cells redraw). */
function Ago(props: { iso: string | undefined }) {
  const now = useNow(1000);
  return <>{age(props.iso, now)} ago</>;
}
