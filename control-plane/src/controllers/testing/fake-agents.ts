/**
 * Plays the agents of agent-less test nodes against the real API server: nodes are registered
 * Ready; every bound pod becomes Running and Ready; a pod being deleted is removed (grace 0), as
 * an agent does once its containers stopped.
 */
import type { ApiClient, Node, Pod } from '@nodelet/api';
import { NODES, PODS, rfc3339 } from '@nodelet/api';

const iso = (ms = Date.now()): string => rfc3339(ms);

export function fakeNode(name: string, extra: Partial<Node> = {}): Node {
  const now = iso();
  return {
    ...extra,
    metadata: { name, labels: { 'kubernetes.io/hostname': name }, ...(extra.metadata ?? {}) },
    spec: { ...(extra.spec ?? {}) },
    status: {
      allocatable: { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '50Gi' },
      capacity: { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '50Gi' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'fake node', lastHeartbeatTime: now, lastTransitionTime: now }],
    },
  };
}

export interface FakeAgents {
  /** Pods that must not become ready (by name), e.g. to hold a rollout. */
  holdBack: Set<string>;
  stop(): Promise<void>;
}

export function startFakeAgents(client: ApiClient, namespace = 'default', intervalMs = 50): FakeAgents {
  const holdBack = new Set<string>();
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        await tick(client, namespace, holdBack);
      } catch {
        // The next round retries; a conflict or a vanished pod is normal here.
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  })();
  return {
    holdBack,
    async stop() {
      running = false;
      await loop;
    },
  };
}

async function tick(client: ApiClient, namespace: string, holdBack: ReadonlySet<string>): Promise<void> {
  const pods = client.resource(PODS, namespace);
  for (const p of (await pods.list()).items as Pod[]) {
    if (!p.spec?.nodeName) continue;
    if (p.metadata.deletionTimestamp) {
      if (!(p.metadata.finalizers ?? []).length || p.status?.phase === 'Running') {
        await pods.delete(p.metadata.name!, { gracePeriodSeconds: 0 }).catch(() => undefined);
      }
      continue;
    }
    if (holdBack.has(p.metadata.name!) || p.status?.phase === 'Running' || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') continue;
    const now = iso();
    await pods
      .patchStatus(p.metadata.name!, { status: { phase: 'Running', podIP: '10.244.0.10', startTime: now, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }] } }, { type: 'merge' })
      .catch(() => undefined);
  }
}

export async function createNodes(client: ApiClient, nodes: Node[]): Promise<void> {
  for (const n of nodes) await client.resource(NODES).create(n);
}
