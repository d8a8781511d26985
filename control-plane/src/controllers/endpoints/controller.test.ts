// The EndpointSlice controller against the real API server (controllers/testing/real-cluster.ts),
// as endpointslice-controller with its own role; the test plays the agent (pod status).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ENDPOINTSLICES, PODS, SERVICES } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { startRealCluster } from '../testing/real-cluster.js';
import { LAST_CHANGE_TRIGGER_TIME } from './controller.js';

test('endpointslice: slices carry endpoints.kubernetes.io/last-change-trigger-time of the change they were written for', async (t) => {
  const c = await startRealCluster();
  t.after(() => c.close());
  const client = c.admin;
  await c.controllers(['endpointslice']);
  await client.resource(SERVICES, 'default').create({ metadata: { name: 'web', namespace: 'default' }, spec: { selector: { app: 'web' }, ports: [{ port: 80, protocol: 'TCP' }] } });
  const before = Date.now();
  await client.resource(PODS, 'default').create({ metadata: { name: 'web-1', namespace: 'default', labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'x' }] } });
  await client.resource(PODS, 'default').patchStatus('web-1', { status: { phase: 'Running', podIP: '10.244.0.9', conditions: [{ type: 'Ready', status: 'True' }] } }, { type: 'merge' });
  const s = await pollUntil('a slice with the pod', async () => (await client.resource(ENDPOINTSLICES, 'default').list()).items.find((x) => x.endpoints?.[0]?.addresses[0] === '10.244.0.9'), { timeoutMs: 8000, intervalMs: 25 });
  const at = Date.parse(s.metadata.annotations?.[LAST_CHANGE_TRIGGER_TIME] ?? '');
  assert.ok(Number.isFinite(at), `annotation set: ${JSON.stringify(s.metadata.annotations)}`);
  assert.ok(at >= before - 5 && at <= Date.now(), 'the time the change was seen');
});
