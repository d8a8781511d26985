/**
 * The lab's images doing what tutorials ask of them, on real containerd with the in-process agent:
 * the lab busybox's `wget`, `nslookup` and `nc` reach a Service by its short name through the pod's
 * search path and the node-local DNS (the static busybox did all along: what crashed was
 * `wget -T`, a busybox 1.35 defect, see docs/images.md), and an nginx image built from Debian packages
 * (`nodelet image build --debian nginx`) serves its welcome page to another pod and to this host.
 * Without the service proxy the Service is headless, so its name resolves to the nginx pod's IP.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PODS, SERVICES } from '@nodelet/api';
import { pollUntil } from '@nodelet/base';
import { buildDebianImage, DEFAULT_DEB_CACHE, DEFAULT_LAB_IMAGE_DIR, ensureLabImages } from '@nodelet/oci';
import { skipUnlessRoot, startHarness, podSpec, getPod, type Harness } from './harness.js';

/** A link-local address of this test's own, so that it runs beside dns-pods.itest.ts. */
const LOCAL_DNS = '169.254.20.46';

let h: Harness | undefined;
let skip = false;
let added = false;

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')}: ${r.stderr}`);
}

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  // nginx goes into the store the harness's registry serves (where `make up` caches it too).
  await ensureLabImages(DEFAULT_LAB_IMAGE_DIR);
  await buildDebianImage({ store: DEFAULT_LAB_IMAGE_DIR, name: 'nginx', tag: 'latest', packages: ['nginx'], cacheDir: DEFAULT_DEB_CACHE, signal: AbortSignal.timeout(300_000) });
  spawnSync('ip', ['addr', 'del', `${LOCAL_DNS}/32`, 'dev', 'lo']);
  ip('addr', 'add', `${LOCAL_DNS}/32`, 'dev', 'lo');
  added = true;
  h = await startHarness('labimg', { clusterDNS: [LOCAL_DNS], clusterDNSBindAddress: LOCAL_DNS }, 46, { controllers: ['endpointslice'] });
});

after(async () => {
  try {
    await h?.stop();
  } finally {
    if (added) spawnSync('ip', ['addr', 'del', `${LOCAL_DNS}/32`, 'dev', 'lo']);
  }
});

async function running(name: string): Promise<{ id: string; podIP: string }> {
  const p = await pollUntil(`pod ${name} running`, async () => {
    const pod = await getPod(h!, name);
    return pod.status?.containerStatuses?.[0]?.state?.running && pod.status.podIP ? pod : undefined;
  }, { timeoutMs: 120_000 });
  return { id: p.status!.containerStatuses![0]!.containerID!.replace('containerd://', ''), podIP: p.status!.podIP! };
}

async function exec(containerId: string, cmd: string[]): Promise<{ code: number; out: string }> {
  const r = await h!.agent.cri.runtime.execSync({ containerId, cmd, timeout: 15 });
  return { code: r.exitCode, out: r.stdout.toString() + r.stderr.toString() };
}

test('busybox wget, nslookup and nc reach the Debian-built nginx by its Service short name; the host fetches the welcome page', { timeout: 300_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const nginx = `${h!.rt.registryHost}/nginx:latest`;
  await h!.api.create(SERVICES, { metadata: { name: 'web', namespace: 'default' }, spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ name: 'http', port: 80 }] } });
  const webPod = podSpec(h!, 'web', { containers: [{ name: 'nginx', image: nginx, imagePullPolicy: 'IfNotPresent' }] });
  webPod.metadata!.labels = { app: 'web' };
  await h!.api.create(PODS, webPod);
  await h!.api.create(PODS, podSpec(h!, 'client', { containers: [{ name: 'c', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent', command: ['sleep', '3600'] }] }));
  const web = await running('web');
  const client = await running('client');

  // From this host, at the pod IP: nginx's own welcome page, as the Debian package installs it.
  const page = await pollUntil('nginx to answer on the pod IP', async () => {
    const r = await fetch(`http://${web.podIP}/`, { signal: AbortSignal.timeout(3000) }).catch(() => undefined);
    return r?.ok ? r.text() : undefined;
  }, { timeoutMs: 30_000 });
  assert.match(page, /Welcome to nginx!/);

  // nslookup of the short name: the search path (default.svc.cluster.local first) against the
  // node-local DNS. busybox's nslookup asks every search domain and exits 1 when any of them is
  // NXDOMAIN, after printing the answer it found (as it does against CoreDNS), so the output is what counts.
  const ns = await pollUntil('web to resolve by its short name in the pod', async () => {
    const r = await exec(client.id, ['nslookup', 'web']);
    return r.out.includes(web.podIP) ? r : undefined;
  }, { timeoutMs: 30_000 });
  assert.match(ns.out, new RegExp(`Server:\\s*${LOCAL_DNS.replaceAll('.', '\\.')}`));
  assert.match(ns.out, new RegExp(`Name:\\s*web\\.default\\.svc\\.cluster\\.local\\s+Address:\\s*${web.podIP.replaceAll('.', '\\.')}`));

  // wget by the short name, through the static glibc's resolver.
  const get = await exec(client.id, ['wget', '-qO-', 'http://web/']);
  assert.equal(get.code, 0, get.out);
  assert.match(get.out, /Welcome to nginx!/);

  // nc connects by name and speaks HTTP.
  const nc = await exec(client.id, ['sh', '-c', "printf 'HEAD / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 web 80"]);
  assert.equal(nc.code, 0, nc.out);
  assert.match(nc.out, /^HTTP\/1\.1 200 OK/);
  assert.match(nc.out, /Server: nginx/);
});
