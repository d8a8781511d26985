/**
 * The agent's Prometheus metrics, under the kubelet's names where one exists. One Registry per
 * agent (not prom-client's global default), so several agents can live in one test process.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { ObservedPod } from '../kubecontainer/observed.js';

export class AgentMetrics {
  readonly registry = new Registry();
  readonly runningPods: Gauge;
  readonly runningContainers: Gauge<'container_state'>;
  readonly podStartDuration: Histogram;
  readonly plegRelistDuration: Histogram;
  readonly podWorkerErrors: Counter;
  readonly nodeName: Gauge<'node'>;

  constructor(nodeName: string) {
    const registers = [this.registry];
    this.runningPods = new Gauge({ name: 'kubelet_running_pods', help: 'Number of pods that have a running pod sandbox', registers });
    this.runningContainers = new Gauge({ name: 'kubelet_running_containers', help: 'Number of containers currently running', labelNames: ['container_state'], registers });
    this.podStartDuration = new Histogram({
      name: 'kubelet_pod_start_duration_seconds',
      help: 'Duration in seconds from the pod being created to all of its containers running',
      buckets: [0.5, 1, 2, 3, 4, 5, 6, 8, 10, 20, 30, 45, 60, 120, 300],
      registers,
    });
    this.plegRelistDuration = new Histogram({
      name: 'kubelet_pleg_relist_duration_seconds',
      help: 'Duration in seconds for relisting pods in PLEG',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.podWorkerErrors = new Counter({ name: 'nodelet_pod_sync_errors_total', help: 'Pod syncs that failed and were retried', registers });
    this.nodeName = new Gauge({ name: 'kubelet_node_name', help: "The node's name. The count is always 1", labelNames: ['node'], registers });
    this.nodeName.set({ node: nodeName }, 1);
  }

  /** Sets the running pods/containers gauges from the runtime's view (housekeeping, and each scrape). */
  observeRuntime(pods: Iterable<ObservedPod>): void {
    let running = 0;
    let containers = 0;
    for (const p of pods) {
      if (p.sandboxes.some((s) => s.ready)) running++;
      containers += p.containers.filter((c) => c.state === 'running').length;
    }
    this.runningPods.set(running);
    this.runningContainers.set({ container_state: 'running' }, containers);
  }
}
