// The node API authorizes every request with a SubjectAccessReview for the node object
// (nodes/proxy, nodes/log, nodes/stats, nodes/metrics): another node's credential, a
// bootstrap token or a user without the grant gets 403 — before any of it, exec into any pod
// on any node was open to anything TokenReview accepted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import WebSocket from 'ws';
import { newBootstrapToken, PODS, SECRETS } from '@nodelet/api';
import { skipUnlessRoot, startHarness, podSpec, getPod } from './harness.js';
import { pollUntil } from '@nodelet/base';

test('node API: 403 unless the caller may create nodes/proxy (exec) or get nodes/log, nodes/metrics', { timeout: 120_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('authz', {}, 7);
  t.after(() => h.stop());
  await h.api.create(PODS, podSpec(h, 'target', { containers: [{ name: 'c', image: h.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] }));
  await pollUntil('target Running', async () => ((await getPod(h, 'target')).status?.phase === 'Running' ? true : undefined), { timeoutMs: 30_000 });
  const port = h.agent.nodeApiPort!;

  // Credentials: another node's, an unconsumed bootstrap token, the admin's.
  const issue = async (nodeName: string): Promise<string> =>
    ((await h.api.create({ group: 'nodelet.io', version: 'v1', kind: 'NodeCredentialRequest', plural: 'nodecredentials', singular: 'nodecredential', namespaced: false }, { metadata: {}, spec: { nodeName } } as never)) as unknown as { status: { token: string } }).status.token;
  const otherNode = await issue('some-other-node');
  const { token: bootstrap, secret } = newBootstrapToken(Date.now() + 3600_000);
  await h.api.create(SECRETS, secret as never, { namespace: 'kube-system' });
  const admin = h.cp.adminToken;

  const get = (path: string, token: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      https.get({ host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      }).on('error', reject);
    });
  const exec = (token: string): Promise<{ status: number; body?: string; output?: string }> =>
    new Promise((resolve, reject) => {
      const ws = new WebSocket(`wss://127.0.0.1:${port}/exec/default/target/c?command=echo&command=pwned&stdout=1&stderr=1`, ['v4.channel.k8s.io'], {
        rejectUnauthorized: false, headers: { Authorization: `Bearer ${token}` },
      });
      let output = '';
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      ws.on('message', (d: Buffer) => {
        if (d[0] === 1) output += d.subarray(1).toString();
      });
      ws.on('close', () => resolve({ status: 101, output }));
      ws.on('error', (err) => (err.message.includes('Unexpected server response') ? undefined : reject(err)));
    });

  const denied = await exec(otherNode);
  assert.equal(denied.status, 403);
  assert.match(denied.body!, /^Forbidden \(user=system:node:some-other-node, verb=create, resource=nodes, subresource=proxy\)/);
  assert.equal((await exec(bootstrap)).status, 403);
  assert.equal((await get('/containerLogs/default/target/c', otherNode)).status, 403);
  assert.equal((await get('/pods', otherNode)).status, 403);
  assert.equal((await get('/metrics', otherNode)).status, 403);
  assert.match((await get('/metrics', otherNode)).body, /subresource=metrics/);
  assert.equal((await get('/pods', 'not-a-token')).status, 401);

  const allowed = await exec(admin);
  assert.equal(allowed.status, 101);
  assert.equal(allowed.output, 'pwned\n');
  assert.equal((await get('/pods', admin)).status, 200);
});
