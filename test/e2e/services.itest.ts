// Services end to end, with the real kubectl against `nodelet lab up` (private ports, state dir,
// bridge nle-svc, cluster CIDR 10.239.0.0/16): the agent's nftables service proxy sends a
// ClusterIP to a 3-replica Deployment from another pod (60 requests reach all 3), the NodePort
// answers from the host on the node IP and 127.0.0.1, a pod reaches itself through its Service,
// scaling to 0 refuses at once and scaling back serves within 2 s of the EndpointSlice change.
// Traffic goes to the ClusterIP only once the live table holds it. `lab down` removes the table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import http from 'node:http';
import { labDown, labUp } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { kubectl, nftMapKeys } from './helpers.js';
import { freePort } from '@nodelet/base/testing';
import { pollUntil } from '@nodelet/base';

const BRIDGE = 'nle-svc';
/**
 * An HTTP GET from inside a pod printing only the body, through busybox nc (busybox 1.35's
 * `wget -T` crashes with SIGSEGV; plain `wget` works: lab-images-network.itest.ts).
 */
const GET = (url: string): string => {
  const [host, port = '80'] = url.replace('http://', '').split(':');
  return `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 ${host} ${port} | tail -n 1`;
};


function get(host: string, port: number, timeoutMs = 2000): Promise<{ ok: boolean; body?: string; code?: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: '/', agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ ok: true, body: body.trim() }));
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ ok: false, code: err.code }));
  });
}

test('Services: ClusterIP from a pod across 3 backends, NodePort on the node IP and 127.0.0.1, hairpin, scale 0 → refused, back → serving within 2 s', async (t) => {
  if (!requireRoot(t)) return;
  if (spawnSync('nft', ['--version']).status !== 0) return t.skip('nft not installed (Debian nftables)');
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-services-'));
  const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.239.0.0/16', bridge: BRIDGE, nodeName: 'e2e-svc', nodeApiPort: nodePort, healthzPort };
  t.after(async () => {
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });
  const up = await labUp(lab);
  const k = kubectl(up.kubeconfig);
  assert.equal(spawnSync('nft', ['list', 'table', 'ip', 'nodelet-proxy']).status, 0, 'the agent installed its table before the node was Ready');

  // 1. A web Deployment answering its pod name, and a client pod.
  const web = `mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www`;
  await k('create', 'deployment', 'web', `--image=${up.images.busybox}`, '--replicas=3', '--', 'sh', '-c', web);
  await k('expose', 'deployment', 'web', '--port', '80', '--target-port', '8080', '--type', 'NodePort');
  await k('run', 'client', `--image=${up.images.busybox}`, '--', 'sleep', '3600');
  const running = async (sel: string[], n: number) => pollUntil(`${n} running pods (${sel.join(' ')})`, async () => {
    const list = JSON.parse(await k('get', 'pods', ...sel, '-o', 'json')) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { phase?: string; conditions?: Array<{ type: string; status: string }> } }> };
    const ready = list.items.filter((p) => !p.metadata.deletionTimestamp && p.status.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready.length === n && list.items.length === n ? ready.map((p) => p.metadata.name) : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 });
  const webPods = await running(['-l', 'app=web'], 3);
  await running(['-l', 'run=client'], 1);
  const svc = JSON.parse(await k('get', 'svc', 'web', '-o', 'json')) as { spec: { clusterIP: string; ports: Array<{ nodePort: number }> } };
  const ip = svc.spec.clusterIP;
  const np = svc.spec.ports[0]!.nodePort;
  await pollUntil(`${ip}:80 in the live service-ips map`, async () => nftMapKeys('service-ips').includes(`${ip} . tcp . 80`), { timeoutMs: 30_000, intervalMs: 250 });
  await pollUntil('the EndpointSlice to list 3 endpoints', async () => (await k('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'jsonpath={.items[*].endpoints[*].addresses[0]}')).trim().split(/\s+/).length === 3, { timeoutMs: 30_000, intervalMs: 250 });
  await pollUntil('3 endpoints in the live table', async () => (spawnSync('nft', ['list', 'table', 'ip', 'nodelet-proxy'], { encoding: 'utf8' }).stdout.match(/numgen random mod 3 /g) ?? []).length >= 1, { timeoutMs: 30_000, intervalMs: 250 });

  // 2. From another pod: one answer, then 60 requests reaching all three.
  const one = (await k('exec', 'client', '--', 'sh', '-c', GET(`http://${ip}`))).trim();
  assert.ok(webPods.includes(one), `answered by a web pod: ${one}`);
  const sixty = (await k('exec', 'client', '--', 'sh', '-c', `for i in $(seq 60); do ${GET(`http://${ip}`)}; done`)).trim().split('\n');
  assert.equal(sixty.length, 60);
  assert.deepEqual([...new Set(sixty)].sort(), [...webPods].sort(), 'all 3 backends answered');

  // 3. NodePort from the host, on the node IP and on 127.0.0.1.
  const nodeIP = (await k('get', 'node', 'e2e-svc', '-o', 'jsonpath={.status.addresses[?(@.type=="InternalIP")].address}')).trim();
  for (const host of [nodeIP, '127.0.0.1']) {
    const r = await get(host, np);
    assert.equal(r.ok, true, `NodePort ${host}:${np}: ${r.code}`);
    assert.ok(webPods.includes(r.body!), `${host}:${np} answered by a web pod: ${r.body}`);
  }

  // 4. Hairpin: a web pod reaches itself through its own Service (1 in 3 picks is itself).
  const self = webPods[0]!;
  const answers = (await k('exec', self, '--', 'sh', '-c', `for i in $(seq 30); do ${GET(`http://${ip}`)}; done`)).trim().split('\n');
  assert.ok(answers.includes(self), `${self} reached itself through ${ip}: ${[...new Set(answers)].join(',')}`);

  // 5. Scale to 0: refused at once (ICMP reject), not a timeout.
  await k('scale', 'deployment', 'web', '--replicas=0');
  await pollUntil(`${ip}:80 in no-endpoint-services`, async () => nftMapKeys('no-endpoint-services').includes(`${ip} . tcp . 80`), { timeoutMs: 60_000, intervalMs: 250 });
  const t0 = performance.now();
  const refused = await k.try('exec', 'client', '--', 'nc', '-w', '10', ip, '80');
  const refusedMs = performance.now() - t0;
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr + refused.stdout, /refused/i);
  assert.ok(refusedMs < 5000, `refused in ${Math.round(refusedMs)} ms (kubectl exec included), not after nc's 10 s timeout`);
  assert.equal((await get(ip, 80)).code, 'ECONNREFUSED', 'the host is refused too');

  // 6. Scale back: serving within 2 s of the EndpointSlice listing a ready endpoint.
  await k('scale', 'deployment', 'web', '--replicas=3');
  const sliceReady = pollUntil('a ready endpoint in the EndpointSlice', async () => {
    const conds = (await k('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web', '-o', 'jsonpath={.items[*].endpoints[*].conditions.ready}')).trim();
    return conds.split(/\s+/).includes('true') ? performance.now() : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 });
  const serving = (async () => {
    for (;;) {
      const r = await get(ip, 80, 500);
      if (r.ok) return performance.now();
      await new Promise((res) => setTimeout(res, 50));
    }
  })();
  const [readyAt, servingAt] = await Promise.all([sliceReady, serving]);
  assert.ok(servingAt - readyAt < 2000, `served ${Math.round(servingAt - readyAt)} ms after the EndpointSlice change`);
  const back = (await k('exec', 'client', '--', 'sh', '-c', GET(`http://${ip}`))).trim();
  assert.match(back, /^web-/);
});
