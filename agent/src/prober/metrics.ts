/**
 * `prober_probe_total`, kubelet's probe counter served at the node API's `/metrics/probes`
 * (pkg/kubelet/prober/prober_manager.go): one series per pod, container, probe type and result
 * (`successful`, `failed`, or `unknown` when the probe could not be run), counting every probe
 * run, settled or not. A pod's series go when its probes are removed, as kubelet deletes them.
 */
import type { ProbeType } from './handlers.js';

export type ProbeMetricResult = 'successful' | 'failed' | 'unknown';

export const PROBE_METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const TYPE_LABEL: Record<ProbeType, string> = { liveness: 'Liveness', readiness: 'Readiness', startup: 'Startup' };
const escape = (s: string): string => s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');

export class ProbeMetrics {
  readonly #series = new Map<string, { uid: string; labels: string; count: number }>();

  /** Counts one probe run. */
  inc(pod: { namespace: string; name: string; uid: string }, container: string, type: ProbeType, result: ProbeMetricResult): void {
    const labels = `container="${escape(container)}",namespace="${escape(pod.namespace)}",pod="${escape(pod.name)}",pod_uid="${escape(pod.uid)}",probe_type="${TYPE_LABEL[type]}",result="${result}"`;
    const s = this.#series.get(labels);
    if (s) s.count++;
    else this.#series.set(labels, { uid: pod.uid, labels, count: 1 });
  }

  /** Drops a pod's series. */
  forgetPod(uid: string): void {
    for (const [k, s] of this.#series) if (s.uid === uid) this.#series.delete(k);
  }

  /** The Prometheus text exposition. */
  render(): string {
    const lines = [...this.#series.values()].map((s) => `prober_probe_total{${s.labels}} ${s.count}`).sort();
    return `# HELP prober_probe_total [BETA] Cumulative number of a liveness, readiness or startup probe for a container by result.\n# TYPE prober_probe_total counter\n${lines.map((l) => `${l}\n`).join('')}`;
  }
}
