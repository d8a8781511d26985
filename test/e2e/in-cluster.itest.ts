// Cluster DNS and in-cluster API access end to end, with the real kubectl against `nodelet lab up`
// (private ports and state dir, bridge nle-incl, cluster CIDR 10.233.0.0/16):
//   - a pod resolves a Service by short name and by FQDN through the kube-dns Service IP, which the
//     agent's proxy sends to the agent's node-local resolver; SRV for a named port, PTR of the cluster
//     IP, a headless Service's A records and per-endpoint names; and fetches the Service by name;
//   - a pod's mounted token and CA reach the API server through the `kubernetes` Service from the
//     pod's own network namespace: 403 for the default account, 200 once `view` is bound, 401 after
//     the pod is deleted (the token was bound to it); @kubernetes/client-node's loadFromCluster()
//     works from the same files.
// Nothing is sent to a Service IP before the live table holds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import * as k8s from '@kubernetes/client-node';
import { labDown, labUp } from '@nodelet/cli';
import { connectCriClient, netnsPathFromSandboxInfo } from '@nodelet/cri-client';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { kubectl, nftMapKeys } from './helpers.js';
import { freePort } from '@nodelet/base/testing';
import { pollUntil } from '@nodelet/base';

const BRIDGE = 'nle-incl';
const KUBE_DNS = '10.96.0.10';
const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';


/** The addresses busybox nslookup printed after the `Name:` line (the server's own address comes before it). */
function answers(out: string): string[] {
  const after = out.split(/^Name:/m).slice(1).join('\n');
  return [...after.matchAll(/Address(?: \d+)?:\s*([0-9.]+)/g)].map((m) => m[1]!);
}

test('in-cluster: Service names through the node-local DNS, and a pod talks to the API server with its own token', async (t) => {
  if (!requireRoot(t)) return;
  if (spawnSync('nft', ['--version']).status !== 0) return t.skip('nft not installed (Debian nftables)');
  if (spawnSync('curl', ['--version']).status !== 0) return t.skip('curl not installed');
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-incluster-'));
  const work = mkdtempSync(join(tmpdir(), 'nodelet-e2e-incluster-files-'));
  const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.233.0.0/16', bridge: BRIDGE, nodeName: 'e2e-incl', nodeApiPort: nodePort, healthzPort };
  t.after(async () => {
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });
  const up = await labUp(lab);
  const k = kubectl(up.kubeconfig);

  // 1. A web Deployment behind a Service with a named port, a headless Service, a client pod.
  const web = 'mkdir -p /www && hostname > /www/index.html && exec httpd -f -p 8080 -h /www';
  await k('create', 'deployment', 'web', `--image=${up.images.busybox}`, '--replicas=3', '--', 'sh', '-c', web);
  const services = join(work, 'services.yaml');
  writeFileSync(services, [
    'apiVersion: v1', 'kind: Service', 'metadata: {name: web}',
    'spec: {selector: {app: web}, ports: [{name: http, port: 80, targetPort: 8080}]}',
    '---',
    'apiVersion: v1', 'kind: Service', 'metadata: {name: web-headless}',
    'spec: {clusterIP: None, selector: {app: web}, ports: [{name: http, port: 8080}]}',
  ].join('\n'));
  await k('apply', '-f', services);
  await k('run', 'client', `--image=${up.images.busybox}`, '--', 'sleep', '3600');
  const running = (sel: string[], n: number) => pollUntil(`${n} ready pods (${sel.join(' ')})`, async () => {
    const list = JSON.parse(await k('get', 'pods', ...sel, '-o', 'json')) as { items: Array<{ metadata: { name: string; deletionTimestamp?: string }; status: { podIP?: string; conditions?: Array<{ type: string; status: string }> } }> };
    const ready = list.items.filter((p) => !p.metadata.deletionTimestamp && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready.length === n && list.items.length === n ? ready.map((p) => ({ name: p.metadata.name, ip: p.status.podIP! })) : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 });
  const webPods = await running(['-l', 'app=web'], 3);
  await running(['-l', 'run=client'], 1);
  const ip = (await k('get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}')).trim();
  await pollUntil('kube-dns and web in the live table', async () => {
    const keys = nftMapKeys('service-ips');
    return keys.includes(`${KUBE_DNS} . udp . 53`) && keys.includes(`${ip} . tcp . 80`);
  }, { timeoutMs: 60_000, intervalMs: 250 });
  await pollUntil('3 endpoints in the headless EndpointSlice', async () =>
    (await k('get', 'endpointslices', '-l', 'kubernetes.io/service-name=web-headless', '-o', 'jsonpath={.items[*].endpoints[*].addresses[0]}')).trim().split(/\s+/).length === 3, { timeoutMs: 60_000, intervalMs: 250 });

  // 2. DNS from the client pod, through the kube-dns Service IP.
  const resolv = await k('exec', 'client', '--', 'cat', '/etc/resolv.conf');
  assert.match(resolv, new RegExp(`^nameserver ${KUBE_DNS.replaceAll('.', '\\.')}$`, 'm'));
  assert.match(resolv, /^search default\.svc\.cluster\.local svc\.cluster\.local cluster\.local/m);
  assert.match(resolv, /ndots:5/);
  const nslookup = (...args: string[]) => k('exec', 'client', '--', 'nslookup', ...args);
  assert.deepEqual(answers(await nslookup('web.default.svc.cluster.local')), [ip], 'FQDN → ClusterIP');
  const srv = await nslookup('-type=SRV', '_http._tcp.web.default.svc.cluster.local');
  assert.match(srv, /web\.default\.svc\.cluster\.local/);
  assert.match(srv, /\b80\b/, `SRV carries the port: ${srv}`);
  assert.match(await nslookup(ip), /web\.default\.svc\.cluster\.local/, 'PTR of the cluster IP');
  assert.deepEqual(answers(await nslookup('web-headless.default.svc.cluster.local')).sort(), webPods.map((p) => p.ip).sort(), 'headless: one A per ready endpoint');
  const endpointName = `${webPods[0]!.ip.replaceAll('.', '-')}.web-headless.default.svc.cluster.local`;
  assert.deepEqual(answers(await nslookup(endpointName)), [webPods[0]!.ip], 'per-endpoint name of a headless Service');
  const missing = await k.try('exec', 'client', '--', 'nslookup', 'nope.default.svc.cluster.local');
  assert.notEqual(missing.code, 0, 'an unknown Service is NXDOMAIN');

  // 3. The Service by name, through the C library's resolver (busybox nslookup ignores the search
  // path; nc resolves with getaddrinfo, which applies it with ndots:5): short name and FQDN.
  for (const name of ['web', 'web.default.svc.cluster.local']) {
    const body = (await k('exec', 'client', '--', 'sh', '-c', `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${name} 80 | tail -n 1`)).trim();
    assert.ok(webPods.some((p) => p.name === body), `http://${name} answered by a web pod: ${body}`);
  }

  // 4. In-cluster API access with the pod's own identity, from the pod's network namespace.
  await k('run', 'api', `--image=${up.images.busybox}`, '--', 'sleep', '3600');
  await running(['-l', 'run=api'], 1);
  const sa = join(work, SA_DIR);
  mkdirSync(sa, { recursive: true });
  for (const f of ['token', 'ca.crt', 'namespace']) writeFileSync(join(sa, f), await k('exec', 'api', '--', 'cat', `${SA_DIR}/${f}`));
  assert.equal((await k('exec', 'api', '--', 'sh', '-c', `stat -c %a ${SA_DIR}/..data/token`)).trim(), '644');
  const env = await k('exec', 'api', '--', 'env');
  assert.match(env, /^KUBERNETES_SERVICE_HOST=10\.96\.0\.1$/m);
  assert.match(env, /^KUBERNETES_SERVICE_PORT=443$/m);
  await pollUntil('the kubernetes Service in the live table', async () => nftMapKeys('service-ips').includes('10.96.0.1 . tcp . 443'), { timeoutMs: 60_000, intervalMs: 250 });
  const netns = await podNetns(up.runtimeEndpoint, 'api');
  const token = (await k('exec', 'api', '--', 'cat', `${SA_DIR}/token`)).trim();
  const fromPod = (): number => {
    // curl verifies the server as kubernetes.default.svc against the pod's ca.crt.
    const r = spawnSync('nsenter', [`--net=${netns}`, 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10',
      '--cacert', join(sa, 'ca.crt'), '--resolve', 'kubernetes.default.svc:443:10.96.0.1', '-H', `Authorization: Bearer ${token}`,
      'https://kubernetes.default.svc/api/v1/namespaces/default/pods'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`curl from the pod's netns failed (${r.status}): ${r.stderr}`);
    return Number(r.stdout);
  };
  assert.equal(fromPod(), 403, 'the default account may not list pods');
  await k('create', 'rolebinding', 'default-view', '--clusterrole=view', '--serviceaccount=default:default');
  await pollUntil('the default account to list pods', async () => fromPod() === 200, { timeoutMs: 10_000, intervalMs: 250 });

  // 5. @kubernetes/client-node from the same files (its in-cluster paths under a prefix).
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = '10.96.0.1';
  process.env.KUBERNETES_SERVICE_PORT = '443';
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromCluster(work);
    const pods = await kc.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: 'default' });
    assert.ok(pods.items.some((p) => p.metadata?.name === 'api'), 'client-node listed the pods in cluster');
  } finally {
    process.env.KUBERNETES_SERVICE_HOST = saved.host;
    process.env.KUBERNETES_SERVICE_PORT = saved.port;
    if (saved.host === undefined) delete process.env.KUBERNETES_SERVICE_HOST;
    if (saved.port === undefined) delete process.env.KUBERNETES_SERVICE_PORT;
  }

  // 6. The token was bound to the pod: once the pod is gone, the captured token is refused.
  const review = (): number => {
    const r = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '10', '--cacert', join(sa, 'ca.crt'),
      '-H', `Authorization: Bearer ${token}`, `${up.server}/api/v1/namespaces/default/pods`], { encoding: 'utf8' });
    return Number(r.stdout);
  };
  assert.equal(review(), 200);
  // Its sleep ignores SIGTERM as PID 1: one second of grace, not 30, before the kill.
  await k('delete', 'pod', 'api', '--grace-period=1', '--wait=true', '--timeout=120s');
  assert.equal(review(), 401, 'a token bound to a deleted pod is refused');
});

/** The pinned network namespace of the one sandbox of pod `name` (default namespace). */
async function podNetns(endpoint: string, name: string): Promise<string> {
  const { client } = await connectCriClient({ endpoint, timeoutMs: 10_000 });
  try {
    const sandboxes = (await client.runtime.listPodSandbox({ filter: { labelSelector: { 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'default' } } })).items ?? [];
    const ready = sandboxes.find((s) => s.state === 'SANDBOX_READY');
    assert.ok(ready, `a ready sandbox of ${name}`);
    const path = netnsPathFromSandboxInfo(await client.runtime.podSandboxStatus({ podSandboxId: ready.id, verbose: true }));
    assert.ok(path, 'the sandbox has a network namespace');
    return path;
  } finally {
    client.close();
  }
}
