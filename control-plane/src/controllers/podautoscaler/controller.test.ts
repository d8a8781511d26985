// The HPA controller against the real test API server, as kube-system/horizontal-pod-autoscaler
// with its upstream role: pod metrics come through the server's metrics.k8s.io API from a
// MetricsSource (the scraper's place), the target is read and scaled through /scale.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiClient, DEPLOYMENTS, EVENTS, HORIZONTALPODAUTOSCALERS, PODS, type Deployment, type HorizontalPodAutoscaler, type Pod } from '@nodelet/api';
import { noopLogger, pollUntil } from '@nodelet/base';
import { startTestApiServer, type TestApiServer } from '../../apiserver/testing/test-server.js';
import type { MetricsSource } from '../../apiserver/metrics-api.js';
import type { PodUsage } from '../../metrics/metrics-store.js';
import { startControllerManager, type ControllerManagerHandle } from '../index.js';

const SA = 'system:serviceaccount:kube-system:horizontal-pod-autoscaler';
const SA_TOKEN = 'hpa-controller-token';
const NS = 'default';

describe('horizontal pod autoscaler controller on the real API server', () => {
  let srv: TestApiServer;
  let admin: ApiClient;
  let sa: ApiClient;
  let manager: ControllerManagerHandle;
  const stop = new AbortController();
  /** Pod name → CPU in millicores; what the fake scraper reports. */
  const cpu = new Map<string, number>();
  const metrics: MetricsSource = {
    node: () => undefined,
    pod: (_ns, name): PodUsage | undefined => {
      const m = cpu.get(name);
      return m === undefined ? undefined : { timeMs: Date.now() - 1000, windowMs: 10_000, containers: [{ name: 'app', cpuNanoCores: m * 1e6, memoryBytes: 1 << 20 }] };
    },
  };

  const runningPod = async (name: string, app: string): Promise<void> => {
    const pods = admin.resource(PODS, NS);
    const p = await pods.create({
      metadata: { name, namespace: NS, labels: { app } },
      spec: { automountServiceAccountToken: false, containers: [{ name: 'app', image: 'busybox', resources: { requests: { cpu: '100m' } } }] },
    } as Pod);
    const long = new Date(Date.now() - 10 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    await pods.updateStatus({ ...p, status: { phase: 'Running', startTime: long, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: long }] } });
  };
  const deployment = (name: string, replicas: number): Deployment => ({
    metadata: { name, namespace: NS },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'busybox' }] } } },
  } as Deployment);
  const replicasOf = async (name: string): Promise<number> => ((await admin.resource(DEPLOYMENTS, NS).get(name)) as Deployment).spec?.replicas ?? -1;
  const hpaOf = async (name: string): Promise<HorizontalPodAutoscaler> => (await admin.resource(HORIZONTALPODAUTOSCALERS, NS).get(name)) as HorizontalPodAutoscaler;
  const condition = (h: HorizontalPodAutoscaler, type: string) => h.status?.conditions?.find((c) => c.type === type);
  const eventMessages = async (name: string): Promise<string[]> =>
    (await admin.resource(EVENTS, NS).list()).items.filter((e) => e.involvedObject?.name === name && e.involvedObject.kind === 'HorizontalPodAutoscaler').map((e) => `${e.reason}: ${e.message}`);

  before(async () => {
    srv = await startTestApiServer({ metrics, tokens: new Map([[SA_TOKEN, { name: SA, groups: ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated'] }]]) });
    admin = new ApiClient({ server: srv.url, token: srv.token });
    sa = new ApiClient({ server: srv.url, token: SA_TOKEN });
    manager = await startControllerManager({ client: sa, logger: noopLogger, signal: stop.signal, controllers: ['horizontalpodautoscaling'], hpaSyncPeriodMs: 200 });
  });
  after(async () => {
    stop.abort();
    await manager?.close();
    admin?.close();
    sa?.close();
    await srv?.close();
  });

  it('scales a Deployment up on CPU above target and down when below, through /scale, with status and events', async () => {
    await admin.resource(DEPLOYMENTS, NS).create(deployment('web', 2));
    await runningPod('web-a', 'web');
    await runningPod('web-b', 'web');
    cpu.set('web-a', 90).set('web-b', 90);
    await admin.resource(HORIZONTALPODAUTOSCALERS, NS).create({
      metadata: { name: 'web', namespace: NS },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 5,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }],
        behavior: { scaleDown: { stabilizationWindowSeconds: 0 } },
      },
    });
    // 90% of request on 2 pods against 50%: ceil(1.8 × 2) = 4.
    await pollUntil('scaled to 4', async () => (await replicasOf('web')) === 4, { timeoutMs: 10_000, intervalMs: 50 });
    await pollUntil('status after the rescale', async () => (await hpaOf('web')).status?.desiredReplicas === 4, { timeoutMs: 10_000, intervalMs: 50 });
    const up = await hpaOf('web');
    assert.deepEqual(up.status?.currentMetrics, [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '90m', averageUtilization: 90 } } }]);
    assert.equal(condition(up, 'ScalingActive')?.reason, 'ValidMetricFound');
    assert.equal(condition(up, 'ScalingActive')?.message, 'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)');
    assert.ok(up.status?.lastScaleTime);
    assert.ok((await eventMessages('web')).includes('SuccessfulRescale: New size: 4; reason: cpu resource utilization (percentage of request) above target'));

    // 10% on the two pods with metrics: ceil(0.2 × 2) = 1 (scale-down window set to 0, 100% per 15 s allowed).
    cpu.set('web-a', 10).set('web-b', 10);
    await pollUntil('scaled to 1', async () => (await replicasOf('web')) === 1, { timeoutMs: 10_000, intervalMs: 50 });
    await pollUntil('scale-down event', async () => (await eventMessages('web')).includes('SuccessfulRescale: New size: 1; reason: All metrics below target'), { timeoutMs: 10_000, intervalMs: 50 });
  });

  it('reports a target without /scale and pods without metrics with upstream’s reasons', async () => {
    const hpas = admin.resource(HORIZONTALPODAUTOSCALERS, NS);
    await hpas.create({ metadata: { name: 'ghost', namespace: NS }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'ghost' }, maxReplicas: 3 } });
    await pollUntil('FailedGetScale', async () => condition(await hpaOf('ghost'), 'AbleToScale')?.reason === 'FailedGetScale', { timeoutMs: 10_000, intervalMs: 50 });
    assert.equal(condition(await hpaOf('ghost'), 'AbleToScale')?.status, 'False');

    await admin.resource(DEPLOYMENTS, NS).create(deployment('quiet', 1));
    await runningPod('quiet-a', 'quiet');
    await hpas.create({ metadata: { name: 'quiet', namespace: NS }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'quiet' }, maxReplicas: 3 } });
    await pollUntil('FailedGetResourceMetric', async () => condition(await hpaOf('quiet'), 'ScalingActive')?.reason === 'FailedGetResourceMetric', { timeoutMs: 10_000, intervalMs: 50 });
    const h = await hpaOf('quiet');
    assert.equal(condition(h, 'ScalingActive')?.status, 'False');
    assert.equal(condition(h, 'AbleToScale')?.reason, 'SucceededGetScale');
    assert.equal(await replicasOf('quiet'), 1);
  });
});
