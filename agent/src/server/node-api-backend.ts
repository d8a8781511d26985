/**
 * What the node API (node-api.ts) serves, read from the agent's parts: the pods it runs (pod
 * workers and pod configuration), their containers and sandboxes for logs, exec, attach and
 * port-forward (the PLEG's runtime view), and the metrics registry. Reads only; never blocks on
 * the API server.
 */
import { join } from 'node:path';
import type { Pleg } from '../pleg/pleg.js';
import type { PodWorkers } from '../podworkers/pod-workers.js';
import { podLogDir } from '../runtime/container-config.js';
import type { RuntimeService } from '../kubecontainer/cri.js';
import type { PodConfig } from '../source/pod-config.js';
import type { AgentMetrics } from './metrics.js';
import type { NodeApiBackend } from './node-api.js';

const STATUS_TIMEOUT_MS = 5000;

export interface NodeApiBackendOptions {
  pods: Pick<PodConfig, 'find' | 'inApi'>;
  workers: Pick<PodWorkers, 'pods' | 'phase'>;
  pleg: Pick<Pleg, 'get' | 'all' | 'healthy'>;
  runtime: RuntimeService;
  metrics: AgentMetrics;
  /** Where container logs are when the runtime does not say (`/var/log/pods`). */
  podLogsDir: string;
}

export function nodeApiBackend(o: NodeApiBackendOptions): NodeApiBackend {
  return {
    // Pods with a worker, except the finished ones the API no longer has (kubelet GetActivePods-like).
    pods: () => o.workers.pods().filter((p) => o.workers.phase(p.metadata.uid!) !== 'finished' || o.pods.inApi(p.metadata.uid!)),
    findContainer: (ns, podName, container, previous) => {
      const pod = o.pods.find(ns, podName);
      if (!pod) return undefined;
      const all = o.pleg.get(pod.metadata.uid!).containers.filter((c) => c.name === container);
      const c = previous ? all[1] : all[0];
      if (!c) return undefined;
      return { id: c.id, running: c.state === 'running', logPath: c.logPath || join(podLogDir(pod, o.podLogsDir), container, `${c.restartCount}.log`) };
    },
    findSandbox: (ns, podName) => {
      const pod = o.pods.find(ns, podName);
      return pod ? o.pleg.get(pod.metadata.uid!).sandboxes.find((s) => s.ready)?.id : undefined;
    },
    isRunning: async (id) => {
      const st = await o.runtime.containerStatus({ containerId: id }, { timeoutMs: STATUS_TIMEOUT_MS }).catch(() => undefined); // unknown to the runtime or it timed out: not running
      return st?.status?.state === 'CONTAINER_RUNNING';
    },
    runtime: o.runtime,
    metrics: async () => {
      o.metrics.observeRuntime(o.pleg.all().values());
      return { contentType: o.metrics.registry.contentType, body: await o.metrics.registry.metrics() };
    },
    healthy: () => o.pleg.healthy(),
  };
}
