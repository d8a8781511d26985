/** The cluster at a glance, kept live by watches: nodes, namespaces, Deployments and their pods, Services, Events. */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { useCan, useWatch } from './hooks.js';
import { byName, eventTime, matches, nodeProblems, nodeReady, podPhase, podReady, type Deployment, type Event, type Node, type Pod, type Service } from './k8s.js';
import { JourneyView } from './journey.js';
import { CreateDeployment, DeploymentActions, LogViewer } from './operate.js';
import { lazyComponent } from './lazy.js';

// xterm.js is most of the console's bytes and few sessions open a terminal: fetched on first use.
const TerminalPanel = lazyComponent('terminal', () => import('./terminal.js').then((m) => m.TerminalPanel));

function Panel(props: { id: string; title: string; error?: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section aria-labelledby={`${props.id}-title`} id={props.id}>
      <div class="panel-head">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        {props.actions}
      </div>
      {props.error && (
        <p role="alert" class="error">
          {props.error}
        </p>
      )}
      {props.children}
    </section>
  );
}

function Nodes(props: { api: Api; pods: Pod[] }) {
  const nodes = useWatch<Node>(props.api, '/api/v1/nodes');
  return (
    <Panel id="nodes" title="Nodes" error={nodes.error}>
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Ready</th>
            <th scope="col">CPU (allocatable / capacity)</th>
            <th scope="col">Memory (allocatable / capacity)</th>
            <th scope="col">Pods</th>
            <th scope="col">Conditions</th>
          </tr>
        </thead>
        <tbody>
          {nodes.items.sort(byName).map((n) => {
            const ready = nodeReady(n);
            const a = n.status?.allocatable ?? {};
            const c = n.status?.capacity ?? {};
            return (
              <tr key={n.metadata.name} data-node={n.metadata.name}>
                <th scope="row">{n.metadata.name}</th>
                <td class={ready === 'True' ? 'ok' : 'bad'} data-ready={ready}>
                  {ready === 'True' ? 'Ready' : ready === 'False' ? 'NotReady' : 'Unknown'}
                </td>
                <td>
                  {a.cpu ?? '?'} / {c.cpu ?? '?'}
                </td>
                <td>
                  {a.memory ?? '?'} / {c.memory ?? '?'}
                </td>
                <td>
                  {props.pods.filter((p) => p.spec?.nodeName === n.metadata.name).length} / {a.pods ?? '?'}
                </td>
                <td>{nodeProblems(n).join(', ') || 'none'}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </Panel>
  );
}

function Deployments(props: { api: Api; namespace: string; pods: Pod[]; onLogs(p: Pod): void; onTerminal(p: Pod): void; onJourney(p: Pod): void }) {
  const deployments = useWatch<Deployment>(props.api, `/apis/apps/v1/namespaces/${props.namespace}/deployments`);
  const canCreate = useCan(props.api, 'create', 'apps', 'deployments', props.namespace);
  const [creating, setCreating] = useState(false);
  const actions = canCreate ? (
    <button type="button" id="create-deployment" aria-expanded={creating} onClick={() => setCreating(!creating)}>
      {creating ? 'Close the form' : 'Create Deployment'}
    </button>
  ) : null;
  return (
    <Panel id="deployments" title="Deployments" error={deployments.error} actions={actions}>
      {creating && <CreateDeployment api={props.api} namespace={props.namespace} onDone={() => setCreating(false)} />}
      {deployments.synced && !deployments.items.length && <p class="hint">No Deployments in {props.namespace}.</p>}
      {deployments.items.sort(byName).map((d) => {
        const pods = props.pods.filter((p) => p.metadata.namespace === props.namespace && matches(d.spec?.selector?.matchLabels, p)).sort(byName);
        return (
          <article key={d.metadata.uid} class="deployment" data-deployment={d.metadata.name} aria-label={`Deployment ${d.metadata.name}`}>
            <h3>
              {d.metadata.name}{' '}
              <span class="ready" data-ready-count={`${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 0}`}>
                {d.status?.readyReplicas ?? 0}/{d.spec?.replicas ?? 0} ready
              </span>{' '}
              <span class="hint">{d.spec?.template?.spec?.containers?.map((c) => c.image).join(', ')}</span>
            </h3>
            <DeploymentActions api={props.api} deployment={d} />
            <ul class="pods" aria-label={`Pods of ${d.metadata.name}`}>
              {pods.map((p) => (
                <li key={p.metadata.uid} data-pod={p.metadata.name} data-phase={podPhase(p)}>
                  <span class={`phase ${podPhase(p)}`}>{podPhase(p)}</span> {p.metadata.name} <span class="hint">{p.spec?.nodeName ?? 'unscheduled'} {p.status?.podIP ?? ''}</span>{' '}
                  <button type="button" class="small" onClick={() => props.onLogs(p)} aria-label={`Logs of ${p.metadata.name}`}>
                    Logs
                  </button>{' '}
                  <button type="button" class="small" onClick={() => props.onTerminal(p)} aria-label={`Terminal in ${p.metadata.name}`}>
                    Terminal
                  </button>{' '}
                  <button type="button" class="small" onClick={() => props.onJourney(p)} aria-label={`Journey of ${p.metadata.name}`}>
                    Journey
                  </button>
                </li>
              ))}
            </ul>
          </article>
        );
      })}
    </Panel>
  );
}

function Services(props: { api: Api; namespace: string; pods: Pod[] }) {
  const services = useWatch<Service>(props.api, `/api/v1/namespaces/${props.namespace}/services`);
  // From the pod watch, not an Endpoints watch (the page keeps its open watches at five, api.ts).
  const backends = (s: Service): string[] =>
    props.pods.filter((p) => p.metadata.namespace === props.namespace && matches(s.spec?.selector, p) && podReady(p) && p.status?.podIP).map((p) => p.status!.podIP!).sort();
  return (
    <Panel id="services" title="Services" error={services.error}>
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Cluster IP</th>
            <th scope="col">Ports</th>
            <th scope="col">Ready backends (pods matching the selector)</th>
          </tr>
        </thead>
        <tbody>
          {services.items.sort(byName).map((s) => (
            <tr key={s.metadata.uid} data-service={s.metadata.name}>
              <th scope="row">{s.metadata.name}</th>
              <td>{s.spec?.type ?? 'ClusterIP'}</td>
              <td>{s.spec?.clusterIP}</td>
              <td>{(s.spec?.ports ?? []).map((p) => `${p.port}${p.nodePort ? ':' + p.nodePort : ''}/${p.protocol ?? 'TCP'}`).join(', ')}</td>
              <td data-backends={backends(s).length}>{s.spec?.selector ? backends(s).join(', ') || 'none' : '(no selector)'}</td>
            </tr>
          ))}
        </tbody>
      </table>
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

/**
 * The namespaces' names, listed at start and again each time the selector takes focus: the one
 * collection read without a watch, to keep the page's open watches at five (api.ts, watch()).
 */
function useNamespaces(api: Api): { names: string[]; refresh(): void } {
  const [names, setNames] = useState<string[]>([]);
  const refresh = useCallback(() => {
    api.get('/api/v1/namespaces').then(
      (l) => setNames(((l as { items?: { metadata: { name?: string } }[] }).items ?? []).map((n) => n.metadata.name!).sort()),
      // Not allowed to list namespaces (a namespaced user): the selector keeps the current one.
      () => setNames([]),
    );
  }, [api]);
  useEffect(refresh, [refresh]);
  return { names, refresh };
}

/** The signed-in page. */
export function Overview(props: { api: Api; user: string; onSignOut(): void }) {
  const [namespace, setNamespace] = useState('default');
  const [logsOf, setLogsOf] = useState<Pod | undefined>(undefined);
  const [terminalOf, setTerminalOf] = useState<Pod | undefined>(undefined);
  // The journey follows the pod's latest version from the pod watch, so it lights up as the pod moves.
  const [journeyOf, setJourneyOf] = useState<string | undefined>(undefined);
  const namespaces = useNamespaces(props.api);
  // One cluster-wide pod watch feeds both the node pod counts and the Deployments' pods.
  const pods = useWatch<Pod>(props.api, '/api/v1/pods');
  const journeyPod = journeyOf ? pods.items.find((p) => p.metadata.uid === journeyOf) : undefined;
  return (
    <>
      <header>
        <h1>nodelet console</h1>
        <label for="namespace">Namespace</label>
        <select id="namespace" value={namespace} onFocus={namespaces.refresh} onChange={(e) => setNamespace((e.target as HTMLSelectElement).value)}>
          {(namespaces.names.includes(namespace) ? namespaces.names : [namespace, ...namespaces.names]).map((n) => (
            <option key={n} value={n}>
              {n}
            </option>
          ))}
        </select>
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
        <Nodes api={props.api} pods={pods.items} />
        <Deployments api={props.api} namespace={namespace} pods={pods.items} onLogs={setLogsOf} onTerminal={setTerminalOf} onJourney={(p) => setJourneyOf(p.metadata.uid)} />
        {journeyPod && <JourneyView api={props.api} pod={journeyPod} onClose={() => setJourneyOf(undefined)} />}
        {logsOf && <LogViewer api={props.api} pod={logsOf} onClose={() => setLogsOf(undefined)} />}
        {terminalOf && <TerminalPanel key={terminalOf.metadata.uid} api={props.api} pod={terminalOf} onClose={() => setTerminalOf(undefined)} />}
        <Services api={props.api} namespace={namespace} pods={pods.items} />
        <Events api={props.api} namespace={namespace} />
      </main>
    </>
  );
}
