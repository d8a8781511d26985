/**
 * ProbeManager (kubelet prober_manager.go): keeps one ProbeWorker per running container and probe
 * type, in step with what the runtime reports. The pod lifecycle calls `sync` on every pod sync
 * (workers start for new running containers, stop for exited or replaced ones) and `removePod`
 * when a pod terminates. Results live in `results`; a settled change wakes the pod worker.
 */
import type { Clock, Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api/agent';
import type { PodEventSink } from '../kubecontainer/events.js';
import { latestContainer, type ObservedPod } from '../kubecontainer/observed.js';
import { isSidecar } from '../kubecontainer/helpers.js';
import type { ExecRunner, ProbeType } from './handlers.js';
import { ProbeResults, probeView, type ProbeView } from './results.js';
import { ProbeWorker } from './worker.js';
import type { ProbeMetrics } from './metrics.js';

export interface ProbeManagerOptions {
  exec: ExecRunner;
  events: PodEventSink;
  clock: Clock;
  log: Logger;
  onResultChanged(uid: string): void;
  /** prober_probe_total, served at /metrics/probes. */
  metrics?: ProbeMetrics;
  /** The node IP: httpGet/tcpSocket/grpc target of host-network pods (their pod IP). */
  hostIP?: () => string;
}

const FIELD: Record<ProbeType, 'livenessProbe' | 'readinessProbe' | 'startupProbe'> = { liveness: 'livenessProbe', readiness: 'readinessProbe', startup: 'startupProbe' };

export class ProbeManager {
  readonly results = new ProbeResults();
  readonly view: ProbeView = probeView(this.results);
  readonly #o: ProbeManagerOptions;
  /** uid → `${container}/${type}` → worker */
  readonly #pods = new Map<string, Map<string, ProbeWorker>>();
  readonly #podIPs = new Map<string, string | undefined>();

  constructor(o: ProbeManagerOptions) {
    this.#o = o;
  }

  /** Number of live workers (for tests and metrics). */
  get workerCount(): number {
    let n = 0;
    for (const m of this.#pods.values()) n += m.size;
    return n;
  }

  sync(pod: Pod, observed: ObservedPod): void {
    const uid = pod.metadata.uid!;
    this.#podIPs.set(uid, pod.spec?.hostNetwork ? this.#o.hostIP?.() : observed.sandboxes[0]?.ips[0]);
    const workers = this.#pods.get(uid) ?? new Map<string, ProbeWorker>();
    const want = new Set<string>();
    // Sidecars (init containers with restartPolicy Always) are probed like app containers.
    const probed = [...(pod.spec?.initContainers ?? []).filter(isSidecar).map((c) => [c, 'init'] as const), ...(pod.spec?.containers ?? []).map((c) => [c, 'regular'] as const)];
    for (const [c, kind] of probed) {
      const st = latestContainer(observed, c.name, kind);
      if (!st || st.state !== 'running') continue;
      for (const type of ['startup', 'liveness', 'readiness'] as const) {
        const probe = c[FIELD[type]];
        if (!probe) continue;
        const key = `${c.name}/${type}`;
        want.add(key);
        const old = workers.get(key);
        if (old?.containerId === st.id) continue;
        old?.dispose();
        workers.set(key, new ProbeWorker({
          pod, container: c, containerId: st.id, startedAt: st.startedAt ?? this.#o.clock.now(), type, probe,
          podIP: () => this.#podIPs.get(uid),
          results: this.results, exec: this.#o.exec, events: this.#o.events, clock: this.#o.clock,
          log: this.#o.log,
          onChange: () => this.#o.onResultChanged(uid),
          ...(this.#o.metrics ? { metrics: this.#o.metrics } : {}),
        }));
      }
    }
    for (const [key, w] of workers) if (!want.has(key)) {
      w.dispose();
      workers.delete(key);
    }
    if (workers.size > 0) this.#pods.set(uid, workers);
    else this.removePod(uid);
  }

  removePod(uid: string): void {
    for (const w of this.#pods.get(uid)?.values() ?? []) w.dispose();
    this.#pods.delete(uid);
    this.#podIPs.delete(uid);
    this.#o.metrics?.forgetPod(uid);
  }

  dispose(): void {
    for (const uid of [...this.#pods.keys()]) this.removePod(uid);
  }
}
