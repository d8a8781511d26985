/**
 * The cluster at a glance, kept live by watches: nodes, namespaces, workloads and their pods, every
 * pod of the namespace, Services, Events; and Apply (server-side apply of YAML).
 */
import { useState } from 'preact/hooks';
import type { Api } from './api.js';
import { useWatch, type Watched } from './hooks.js';
import { age, byName, eventTime, podPhase, serviceEndpoints, type EndpointSlice, type Event, type Namespace, type Pod, type Service } from './k8s.js';
import { JourneyView } from './journey.js';
import { Nodes } from './nodes.js';
import { LogViewer } from './operate.js';
import { Panel } from './panel.js';
import { VirtualTable } from './virtual.js';
import { PodButtons, Workloads } from './workloads.js';
import { lazyComponent } from './lazy.js';

// xterm.js is most of the console's bytes and few sessions open a terminal: fetched on first use;
// so is the YAML parser Apply needs.
const TerminalPanel = lazyComponent('terminal', () => import('./terminal.js').then((m) => m.TerminalPanel));
const ApplyPanel = lazyComponent('YAML editor', () => import('./apply.js').then((m) => m.ApplyPanel));

function Services(props: { api: Api; namespace: string }) {
  const services = useWatch<Service>(props.api, `/api/v1/namespaces/${props.namespace}/services`);
  // The endpoints as the cluster has them (targetPort resolved, publishNotReadyAddresses, slices
  // written by hand for a selectorless Service), not worked out again from the pods.
  const slices = useWatch<EndpointSlice>(props.api, `/apis/discovery.k8s.io/v1/namespaces/${props.namespace}/endpointslices`);
  return (
    <Panel id="services" title="Services" error={services.error}>
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Cluster IP</th>
            <th scope="col">Ports</th>
            <th scope="col">Endpoints (EndpointSlices)</th>
          </tr>
        </thead>
        <tbody>
          {services.items.sort(byName).map((s) => {
            const endpoints = serviceEndpoints(slices.items, s.metadata.name ?? '');
            return (
              <tr key={s.metadata.uid} data-service={s.metadata.name}>
                <th scope="row">{s.metadata.name}</th>
                <td>{s.spec?.type ?? 'ClusterIP'}</td>
                <td>{s.spec?.clusterIP}</td>
                <td>{(s.spec?.ports ?? []).map((p) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol ?? 'TCP'}`).join(', ')}</td>
                <td data-backends={endpoints.filter((e) => e.ready).length}>
                  {endpoints.length
                    ? endpoints.map((e, i) => (
                        <span key={e.text} data-endpoint={e.text} data-ready={e.ready}>
                          {i ? ', ' : ''}
                          {e.text}
                          {e.mark && <span class="hint"> ({e.mark})</span>}
                        </span>
                      ))
                    : s.spec?.selector
                      ? 'none'
                      : 'none (no selector)'}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {slices.error && (
        <p class="hint" id="services-extra-error">
          EndpointSlices: {slices.error}.
        </p>
      )}
    </Panel>
  );
}

function Events(props: { api: Api; namespace: string }) {
  const events = useWatch<Event>(props.api, `/api/v1/namespaces/${props.namespace}/events`);
  const recent = events.items.sort((a, b) => eventTime(b).localeCompare(eventTime(a))).slice(0, 25);
  return (
    <Panel id="events" title="Recent events" error={events.error}>
      <ol class="events">
        {recent.map((e) => (
          <li key={e.metadata.uid} class={e.type === 'Warning' ? 'bad' : ''}>
            <time>{eventTime(e).replace('T', ' ').replace('Z', '')}</time> <strong>{e.reason}</strong> {e.involvedObject?.kind}/{e.involvedObject?.name}: {e.message}
            {e.count && e.count > 1 ? ` (×${e.count})` : ''}
          </li>
        ))}
      </ol>
    </Panel>
  );
}

/** The namespaces (watched: the selector and the table follow them), with their phase and pod count. */
function Namespaces(props: { namespaces: Watched<Namespace>; pods: Pod[]; current: string; onSelect(ns: string): void }) {
  const count = new Map<string, number>();
  for (const p of props.pods) count.set(p.metadata.namespace ?? '', (count.get(p.metadata.namespace ?? '') ?? 0) + 1);
  return (
    <Panel id="namespaces" title="Namespaces" error={props.namespaces.error}>
      <VirtualTable
        items={props.namespaces.items.sort(byName)}
        columns={3}
        label="Namespaces"
        maxRows={6}
        head={
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Phase</th>
            <th scope="col">Pods</th>
          </tr>
        }
        row={(n, i) => (
          <tr key={n.metadata.name} data-namespace={n.metadata.name} aria-rowindex={i + 2}>
            <th scope="row">
              <button type="button" class="small link" aria-current={n.metadata.name === props.current} onClick={() => props.onSelect(n.metadata.name!)}>
                {n.metadata.name}
              </button>
            </th>
            <td class={n.status?.phase === 'Terminating' ? 'bad' : ''}>{n.status?.phase ?? 'Active'}</td>
            <td>{count.get(n.metadata.name ?? '') ?? 0}</td>
          </tr>
        )}
      />
    </Panel>
  );
}

/** Every pod of the namespace in one virtualised table (3,000 pods draw a few dozen rows). */
function Pods(props: { pods: Pod[]; synced: boolean; namespace: string; onLogs(p: Pod): void; onTerminal(p: Pod): void; onJourney(p: Pod): void }) {
  const pods = props.pods.filter((p) => p.metadata.namespace === props.namespace).sort(byName);
  const now = Date.now();
  return (
    <Panel id="pods" title={`Pods (${pods.length})`}>
      {props.synced && !pods.length && <p class="hint">No pods in {props.namespace}.</p>}
      <VirtualTable
        items={pods}
        columns={7}
        label={`Pods in ${props.namespace}`}
        maxRows={15}
        head={
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Phase</th>
            <th scope="col">Restarts</th>
            <th scope="col">Age</th>
            <th scope="col">Node</th>
            <th scope="col">IP</th>
            <th scope="col">Open</th>
          </tr>
        }
        row={(p, i) => (
          <tr key={p.metadata.uid} data-pod={p.metadata.name} data-phase={podPhase(p)} aria-rowindex={i + 2}>
            <th scope="row">{p.metadata.name}</th>
            <td class={`phase ${podPhase(p)}`}>{podPhase(p)}</td>
            <td>{(p.status?.containerStatuses ?? []).reduce((n, c) => n + (c.restartCount ?? 0), 0)}</td>
            <td>{age(p.metadata.creationTimestamp, now)}</td>
            <td>{p.spec?.nodeName ?? 'unscheduled'}</td>
            <td>{p.status?.podIP ?? ''}</td>
            <td>
              <PodButtons pod={p} onLogs={props.onLogs} onTerminal={props.onTerminal} onJourney={props.onJourney} />
            </td>
          </tr>
        )}
      />
    </Panel>
  );
}

/** The signed-in page. */
export function Overview(props: { api: Api; user: string; onSignOut(): void }) {
  const [namespace, setNamespace] = useState('default');
  const [logsOf, setLogsOf] = useState<Pod | undefined>(undefined);
  const [terminalOf, setTerminalOf] = useState<Pod | undefined>(undefined);
  // The journey follows the pod's latest version from the pod watch, so it lights up as the pod moves.
  const [journeyOf, setJourneyOf] = useState<string | undefined>(undefined);
  const [applying, setApplying] = useState(false);
  const namespaces = useWatch<Namespace>(props.api, '/api/v1/namespaces');
  const names = namespaces.items.map((n) => n.metadata.name!).sort();
  // One cluster-wide pod watch feeds the node pod counts, the workloads' pods and the pods table.
  const pods = useWatch<Pod>(props.api, '/api/v1/pods');
  const journeyPod = journeyOf ? pods.items.find((p) => p.metadata.uid === journeyOf) : undefined;
  return (
    <>
      <header>
        <h1>nodelet console</h1>
        <label for="namespace">Namespace</label>
        <select id="namespace" value={namespace} onChange={(e) => setNamespace((e.target as HTMLSelectElement).value)}>
          {(names.includes(namespace) ? names : [namespace, ...names]).map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
        <button type="button" id="apply-yaml" aria-expanded={applying} onClick={() => setApplying(!applying)}>
          Apply YAML
        </button>
        <span class="user" id="user">
          Signed in as <strong>{props.user}</strong>
        </span>
        <button type="button" id="sign-out" onClick={props.onSignOut}>
          Sign out
        </button>
      </header>
      <main>
        {pods.error && (
          <p role="alert" class="error">
            Pods: {pods.error}
          </p>
        )}
        {applying && <ApplyPanel api={props.api} namespace={namespace} onClose={() => setApplying(false)} />}
        <Nodes api={props.api} pods={pods.items} />
        <Namespaces namespaces={namespaces} pods={pods.items} current={namespace} onSelect={setNamespace} />
        <Workloads api={props.api} namespace={namespace} pods={pods.items} onLogs={setLogsOf} onTerminal={setTerminalOf} onJourney={(p) => setJourneyOf(p.metadata.uid)} />
        {journeyPod && <JourneyView api={props.api} pod={journeyPod} onClose={() => setJourneyOf(undefined)} />}
        {logsOf && <LogViewer api={props.api} pod={logsOf} onClose={() => setLogsOf(undefined)} />}
        {terminalOf && <TerminalPanel key={terminalOf.metadata.uid} api={props.api} pod={terminalOf} onClose={() => setTerminalOf(undefined)} />}
        <Pods pods={pods.items} synced={pods.synced} namespace={namespace} onLogs={setLogsOf} onTerminal={setTerminalOf} onJourney={(p) => setJourneyOf(p.metadata.uid)} />
        <Services api={props.api} namespace={namespace} />
        <Events api={props.api} namespace={namespace} />
      </main>
    </>
  );
}
