// Hollow nodes against the real control plane (API server, scheduler, controllers, in-process):
// three hollow nodes with their own node credentials run a Deployment of 6 to Running with pod IPs
// from their pod CIDRs, hold Ready and their leases, and stop cleanly.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ApiClient, DEPLOYMENTS, LEASES, loadKubeconfig, NODES, PODS, type Deployment, type Pod } from '@nodelet/api';
import { hasCode, noopLogger, pollUntil } from '@nodelet/base';
import { startControlPlane } from '@nodelet/control-plane';
import { HOLLOW_NODE_LABEL, HollowNodes } from '../../src/hollow/hollow-nodes.js';
import { cleanups } from '@nodelet/base/testing';

function inCidr(ip: string, cidr: string): boolean {
  const toInt = (a: string): number => a.split('.').reduce((n, o) => (n << 8) + Number(o), 0) >>> 0;
  const [base, bits] = cidr.split('/');
  const mask = (~0 << (32 - Number(bits))) >>> 0;
  return ((toInt(ip) & mask) >>> 0) === ((toInt(base!) & mask) >>> 0);
}

test('3 hollow nodes run a Deployment of 6: pods Running with IPs from their pod CIDRs, nodes Ready with leases, own node identities', { timeout: 120_000 }, async (t) => {
  const cleanup = cleanups(t);
  // Three agents in this process: node's listener-leak warning on any of their signals is a failure.
  const leaks: string[] = [];
  const onWarning = (w: Error): void => void (w.name === 'MaxListenersExceededWarning' && leaks.push(w.message));
  process.on('warning', onWarning);
  cleanup(() => void process.off('warning', onWarning));
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-hollow-it-'));
  cleanup(() => rm(dir, { recursive: true, force: true }));
  const cp = await startControlPlane({ dataDir: join(dir, 'cp'), bindAddress: '127.0.0.1', port: 0, registryAddress: '', metrics: false, logger: noopLogger });
  cleanup(() => cp.close());
  const admin = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem });
  cleanup(() => admin.close());

  const nodes = await HollowNodes.start({
    admin: await loadKubeconfig(cp.kubeconfigPath), nodes: 3, namePrefix: 'hollow-it-', rootDir: join(dir, 'nodes'), log: noopLogger,
    config: { nodeStatusUpdateFrequency: '1s' },
  });
  // Registered after cp.close so it runs before it (cleanups run last-in first-out).
  cleanup(() => nodes.close());
  assert.deepEqual(nodes.names.sort(), ['hollow-it-0', 'hollow-it-1', 'hollow-it-2']);

  const ready = await pollUntil('3 hollow nodes Ready with pod CIDRs', async () => {
    const list = await admin.list(NODES, { labelSelector: `${HOLLOW_NODE_LABEL}=true` });
    const ok = list.items.filter((n) => n.spec?.podCIDR && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ok.length === 3 ? ok : undefined;
  }, { timeoutMs: 30_000 });
  const cidrs = new Map(ready.map((n) => [n.metadata.name!, n.spec!.podCIDR!]));
  for (const n of ready) assert.equal(n.status?.nodeInfo?.containerRuntimeVersion, 'hollow://v0.1.0');

  const deployment: Deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      replicas: 6,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] } },
    },
  };
  await admin.create(DEPLOYMENTS, deployment);
  const running = await pollUntil('6 pods Running with IPs', async () => {
    const list = await admin.list(PODS, { namespace: 'default', labelSelector: 'app=web' });
    const ok = list.items.filter((p: Pod) => p.status?.phase === 'Running' && p.status.podIP);
    return ok.length === 6 ? ok : undefined;
  }, { timeoutMs: 60_000, intervalMs: 250 });
  const ips = new Set<string>();
  for (const p of running) {
    const node = p.spec!.nodeName!;
    assert.ok(cidrs.has(node), `pod ${p.metadata.name} on hollow node ${node}`);
    assert.ok(inCidr(p.status!.podIP!, cidrs.get(node)!), `${p.status!.podIP} in ${cidrs.get(node)}`);
    assert.ok(p.status!.containerStatuses?.[0]?.ready, 'the container is ready');
    ips.add(p.status!.podIP!);
  }
  assert.equal(ips.size, 6, 'every pod its own address');

  for (const name of nodes.names) {
    const lease = await admin.get(LEASES, name, { namespace: 'kube-node-lease' });
    assert.equal(lease.spec?.holderIdentity, name);
    assert.ok(lease.spec?.renewTime);
  }

  // Each node acts as system:node:<name>: NodeRestriction lets it label itself, not another node.
  const own = nodes.client('hollow-it-0')!;
  await own.patch(NODES, 'hollow-it-0', { metadata: { labels: { 'example.com/hollow-check': 'yes' } } }, { type: 'merge' });
  await assert.rejects(
    own.patch(NODES, 'hollow-it-1', { metadata: { labels: { 'example.com/hollow-check': 'no' } } }, { type: 'merge' }),
    (err) => hasCode(err, 'ERR_PERMISSION_DENIED'),
  );

  // Stop: the agents close (leases stop being renewed); nothing is left running in this process,
  // so the test file ends by itself.
  await nodes.close();
  assert.equal(nodes.agents.length, 0);
  assert.deepEqual(leaks, [], 'no MaxListenersExceededWarning');
});
