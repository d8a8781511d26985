/**
 * The workloads of the namespace, one kind at a time (Deployments, StatefulSets, DaemonSets, Jobs,
 * CronJobs), each with its pods, live: every kind has its own watch (the tabs show their counts)
 * and the pods come from the page's pod watch.
 */
import { useState } from 'preact/hooks';
import type { Api } from './api.js';
import { useCan, useWatch } from './hooks.js';
import { byName, matches, podPhase, type Pod, type Workload } from './k8s.js';
import { lazyComponent } from './lazy.js';
import { WorkloadActions } from './operate.js';
import { Panel } from './panel.js';

// The form and its image list: a chunk fetched when the form first opens (not in the first load).
const CreateDeployment = lazyComponent('create form', () => import('./create.js').then((m) => m.CreateDeployment));

interface KindInfo {
  /** The tab's label and the panel's title. */
  label: string;
  group: 'apps' | 'batch';
  resource: string;
  scale: boolean;
  restart: boolean;
  /** The "ready" figure: done/wanted, as kubectl get shows it. */
  progress(w: Workload): [number, number];
  /** What else kubectl get would show (schedule, completions…). */
  detail(w: Workload): string;
  /** Whether `p` belongs to `w`. */
  owns(w: Workload, p: Pod): boolean;
}

const controlledBy = (w: Workload, p: Pod): boolean => !!p.metadata.ownerReferences?.some((o) => o.uid === w.metadata.uid);
const images = (spec: { containers?: { image?: string }[] } | undefined): string => spec?.containers?.map((c) => c.image).join(', ') ?? '';
const activeCount = (w: Workload): number => (Array.isArray(w.status?.active) ? w.status.active.length : (w.status?.active ?? 0));

/** The kinds, in the order of the tabs. */
export const KINDS: Record<string, KindInfo> = {
  deployments: {
    label: 'Deployments', group: 'apps', resource: 'deployments', scale: true, restart: true,
    progress: (w) => [w.status?.readyReplicas ?? 0, w.spec?.replicas ?? 0],
    detail: (w) => images(w.spec?.template?.spec),
    // A Deployment's pods belong to its ReplicaSets: matched by its selector, as kubectl does.
    owns: (w, p) => matches(w.spec?.selector?.matchLabels, p),
  },
  statefulsets: {
    label: 'StatefulSets', group: 'apps', resource: 'statefulsets', scale: true, restart: true,
    progress: (w) => [w.status?.readyReplicas ?? 0, w.spec?.replicas ?? 0],
    detail: (w) => images(w.spec?.template?.spec),
    owns: controlledBy,
  },
  daemonsets: {
    label: 'DaemonSets', group: 'apps', resource: 'daemonsets', scale: false, restart: true,
    progress: (w) => [w.status?.numberReady ?? 0, w.status?.desiredNumberScheduled ?? 0],
    detail: (w) => images(w.spec?.template?.spec),
    owns: controlledBy,
  },
  jobs: {
    label: 'Jobs', group: 'batch', resource: 'jobs', scale: false, restart: false,
    progress: (w) => [w.status?.succeeded ?? 0, w.spec?.completions ?? 1],
    detail: (w) => `${activeCount(w)} active, ${w.status?.failed ?? 0} failed · ${images(w.spec?.template?.spec)}`,
    owns: controlledBy,
  },
  cronjobs: {
    label: 'CronJobs', group: 'batch', resource: 'cronjobs', scale: false, restart: false,
    progress: (w) => [activeCount(w), activeCount(w)],
    detail: (w) => `${w.spec?.schedule ?? ''}${w.spec?.suspend ? ' (suspended)' : ''} · last ${w.status?.lastScheduleTime ?? 'never'} · ${images(w.spec?.jobTemplate?.spec?.template?.spec)}`,
    // Its pods belong to its Jobs, which the CronJob controller names <cronjob>-<minutes since the epoch>.
    owns: (w, p) => !!p.metadata.ownerReferences?.some((o) => o.kind === 'Job' && o.name.startsWith(`${w.metadata.name}-`) && /^\d+$/.test(o.name.slice(w.metadata.name!.length + 1))),
  },
};

/** A workload's pods listed beside it at most; the Pods table below lists them all. */
const POD_LIST_MAX = 20;

export function Workloads(props: { api: Api; namespace: string; pods: Pod[]; onLogs(p: Pod): void; onTerminal(p: Pod): void; onJourney(p: Pod): void }) {
  const [kind, setKind] = useState('deployments');
  const info = KINDS[kind]!;
  const baseOf = (k: string): string => `/apis/${KINDS[k]!.group}/v1/namespaces/${props.namespace}/${KINDS[k]!.resource}`;
  const base = baseOf(kind);
  // One watch per kind, all open (WebSockets, watch.ts): switching tabs shows what is already
  // there. KINDS is fixed, so the hooks run in the same order on every render.
  const watched = Object.fromEntries(Object.keys(KINDS).map((k) => [k, useWatch<Workload>(props.api, baseOf(k))]));
  const workloads = watched[kind]!;
  const canCreate = useCan(props.api, 'create', 'apps', 'deployments', props.namespace);
  const [creating, setCreating] = useState(false);
  const actions =
    kind === 'deployments' && canCreate ? (
      <button type="button" id="create-deployment" aria-expanded={creating} onClick={() => setCreating(!creating)}>
        {creating ? 'Close the form' : 'Create Deployment'}
      </button>
    ) : null;
  const nsPods = props.pods.filter((p) => p.metadata.namespace === props.namespace);
  return (
    <Panel id="workloads" title="Workloads" error={workloads.error} actions={actions}>
      {/* Toggle buttons (aria-pressed), not ARIA tabs: tabs promise arrow-key moves these do not need. */}
      <div class="tabs" role="group" aria-label="Workload kind">
        {Object.entries(KINDS).map(([k, v]) => (
          <button type="button" key={k} id={`tab-${k}`} aria-pressed={k === kind} onClick={() => setKind(k)}>
            {v.label}
            {watched[k]!.synced ? ` (${watched[k]!.items.length})` : ''}
          </button>
        ))}
      </div>
      {creating && kind === 'deployments' && <CreateDeployment api={props.api} namespace={props.namespace} onDone={() => setCreating(false)} />}
      {workloads.synced && !workloads.items.length && (
        <p class="hint">
          No {info.label} in {props.namespace}.
        </p>
      )}
      {workloads.items.sort(byName).map((w) => {
        const name = w.metadata.name!;
        const pods = nsPods.filter((p) => info.owns(w, p)).sort(byName);
        const [done, wanted] = info.progress(w);
        return (
          <article key={w.metadata.uid} class="deployment" data-workload={`${kind}/${name}`} {...(kind === 'deployments' ? { 'data-deployment': name } : {})} aria-label={`${info.label.slice(0, -1)} ${name}`}>
            <h3>
              {name}{' '}
              <span class="ready" data-ready-count={`${done}/${wanted}`}>
                {done}/{wanted} {kind === 'jobs' ? 'succeeded' : kind === 'cronjobs' ? 'active' : 'ready'}
              </span>{' '}
              <span class="hint">{info.detail(w)}</span>
            </h3>
            <WorkloadActions api={props.api} workload={w} path={`${base}/${name}`} scale={info.scale} restart={info.restart} />
            <ul class="pods" aria-label={`Pods of ${name}`}>
              {pods.slice(0, POD_LIST_MAX).map((p) => (
                <li key={p.metadata.uid} data-pod={p.metadata.name} data-phase={podPhase(p)}>
                  <span class={`phase ${podPhase(p)}`}>{podPhase(p)}</span> {p.metadata.name} <span class="hint">{p.spec?.nodeName ?? 'unscheduled'} {p.status?.podIP ?? ''}</span>{' '}
                  <PodButtons pod={p} onLogs={props.onLogs} onTerminal={props.onTerminal} onJourney={props.onJourney} />
                </li>
              ))}
              {pods.length > POD_LIST_MAX && <li class="hint">and {pods.length - POD_LIST_MAX} more (the Pods table lists them all)</li>}
            </ul>
          </article>
        );
      })}
    </Panel>
  );
}

/** Logs, Terminal and Journey for one pod. */
export function PodButtons(props: { pod: Pod; onLogs(p: Pod): void; onTerminal(p: Pod): void; onJourney(p: Pod): void }) {
  const p = props.pod;
  return (
    <>
      <button type="button" class="small" onClick={() => props.onLogs(p)} aria-label={`Logs of ${p.metadata.name}`}>
        Logs
      </button>{' '}
      <button type="button" class="small" onClick={() => props.onTerminal(p)} aria-label={`Terminal in ${p.metadata.name}`}>
        Terminal
      </button>{' '}
      <button type="button" class="small" onClick={() => props.onJourney(p)} aria-label={`Journey of ${p.metadata.name}`}>
        Journey
      </button>
    </>
  );
}
