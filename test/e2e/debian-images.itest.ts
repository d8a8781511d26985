// The first commands of every Services tutorial, by their unmodified names, on `nodelet lab up`
// (private ports, state dir, bridge nle-deb, cluster CIDR 10.246.0.0/16) with the real kubectl:
// `nodelet image build --debian nginx` into the store the lab serves, `kubectl create deployment
// web --image=nginx` + `kubectl expose`, then from a `busybox` pod `wget -qO-` returns nginx's
// welcome page through the ClusterIP, and the access log reaches `kubectl logs`. The Service gets a
// ClusterIP of its own and the pod uses it rather than kube-dns: labs of concurrent tests share the
// host's one proxy table and the 10.96.0.0/12 range (10.96.0.10 included). Short names through the
// search path: agent/test/integration/lab-images-network.itest.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { labDown, labUp } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { DEFAULT_LAB_IMAGE_DIR, ensureLabImages } from '@nodelet/oci';
import { kubectl } from './helpers.js';
import { freePort } from '@nodelet/base/testing';
import { pollUntil } from '@nodelet/base';

const BRIDGE = 'nle-deb';
/** Not the first address of the range, which every lab's first Service gets. */
const WEB_IP = '10.96.46.26';
const NODELET = fileURLToPath(new URL('../../bin/nodelet-dev', import.meta.url));

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 300_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

test('Debian-built nginx by the name nginx behind a Service; busybox wget gets the welcome page through the ClusterIP', { timeout: 600_000 }, async (t) => {
  if (!requireRoot(t)) return;
  if (spawnSync('nft', ['--version']).status !== 0) return t.skip('nft not installed (Debian nftables)');
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-debian-'));
  // A private copy of the lab images: nginx goes into this lab's store only.
  const labs = await ensureLabImages(DEFAULT_LAB_IMAGE_DIR);
  const imagesDir = join(stateDir, 'images');
  cpSync(labs.dir, imagesDir, { recursive: true });
  const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.246.0.0/16', bridge: BRIDGE, nodeName: 'e2e-deb', nodeApiPort: nodePort, healthzPort, imagesDir };
  t.after(async () => {
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });

  const built = await run(NODELET, ['image', 'build', '--debian', 'nginx', '--store', imagesDir]);
  assert.equal(built.code, 0, built.stderr);
  assert.match(built.stdout, /^nginx:latest sha256:[0-9a-f]{64} \(\d+ Debian packages\)\n$/);

  const up = await labUp(lab);
  const k = kubectl(up.kubeconfig);
  await k('create', 'deployment', 'web', '--image=nginx');
  await k('expose', 'deployment', 'web', '--port', '80', '--cluster-ip', WEB_IP);
  await k('run', 't', '--image=busybox', '--', 'sleep', '1d');
  for (const sel of ['app=web', 'run=t']) {
    await pollUntil(`a ready pod ${sel}`, async () => (await k('get', 'pods', '-l', sel, '-o', 'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}')).trim() === 'True', { timeoutMs: 180_000, intervalMs: 500 });
  }
  const ip = (await k('get', 'svc', 'web', '-o', 'jsonpath={.spec.clusterIP}')).trim();

  assert.equal(ip, WEB_IP);
  // Traffic goes to the ClusterIP once the agent's live table holds it.
  await pollUntil(`${ip}:80 in the live service-ips map`, async () =>
    spawnSync('nft', ['list', 'map', 'ip', 'nodelet-proxy', 'service-ips'], { encoding: 'utf8' }).stdout.includes(`${ip} . tcp . 80 `) || undefined, { timeoutMs: 30_000, intervalMs: 250 });
  const page = await pollUntil('the welcome page through the Service', async () => {
    const r = await k.try('exec', 't', '--', 'wget', '-qO-', `http://${ip}`);
    return r.code === 0 ? r.stdout : undefined;
  }, { timeoutMs: 60_000, intervalMs: 500 });
  assert.match(page, /<title>Welcome to nginx!<\/title>/);

  // The recipe's log links: nginx's access log is the container's stdout, so kubectl logs shows the request.
  const logs = await pollUntil('the request in kubectl logs', async () => {
    const l = await k('logs', 'deploy/web');
    return /"GET \/ HTTP\/1\.1" 200 .*Wget/.test(l) ? l : undefined;
  }, { timeoutMs: 30_000, intervalMs: 500 });
  assert.match(logs, /"GET \/ HTTP\/1\.1" 200/);
});
