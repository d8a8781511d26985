// pods/proxy, services/proxy and nodes/proxy against a lab cluster (`nodelet lab up` on private
// ports, state dir and bridge): kubectl get --raw and `kubectl proxy` reach a pod's HTTP server
// through the API server, which dials the pod IP on the lab bridge; a caller without the proxy
// subresource gets 403 and an unknown service port 503, as kube-apiserver answers.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { labDown, labUp, type LabUpResult } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { freePort, startTestProcess, type TestProcess } from '@nodelet/base/testing';
import { kubectl, type Kubectl } from './helpers.js';

const BRIDGE = 'nle-prx';
const NODE = 'prx-node';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let skipReason: string | false = false;
requireRoot({ skip: (m) => (skipReason = m ?? 'skipped') });

describe('kubectl through pods/proxy, services/proxy and nodes/proxy on a lab cluster', { skip: skipReason }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-proxy-'));
  const cacheDir = mkdtempSync(join(tmpdir(), 'nodelet-kubectl-cache-'));
  let lab: Parameters<typeof labUp>[0];
  let up: LabUpResult;
  let k: Kubectl;
  let proxy: TestProcess<string> | undefined;

  /** kubectl that reports failures instead of throwing. */
  const run = (args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile('kubectl', ['--kubeconfig', up.kubeconfig, '--cache-dir', cacheDir, ...args], { timeout: 60_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });

  before(async () => {
    const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.212.0.0/16', bridge: BRIDGE, nodeName: NODE, nodeApiPort: nodePort, healthzPort };
    up = await labUp(lab);
    k = kubectl(up.kubeconfig);
    const web = 'mkdir -p /www && echo hello-proxy > /www/index.html && exec httpd -f -p 8080 -h /www';
    await k('run', 'web', `--image=${up.images.busybox}`, '--port=8080', '--restart=Never', '--', 'sh', '-c', web);
    await k('expose', 'pod', 'web', '--port=80', '--target-port=8080', '--name=web');
    await k('wait', '--for=condition=Ready', 'pod/web', '--timeout=120s');
  });

  after(async () => {
    await proxy?.stop();
    if (k) await k('delete', 'pod', '--all', '--grace-period=1', '--wait=true', '--timeout=60s').catch(() => undefined);
    if (lab) await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('kubectl get --raw reaches the pod through its service (numbered port) and directly (pod port)', async () => {
    // The EndpointSlice follows the pod's readiness shortly after.
    const viaService = await pollUntil('services/web:80/proxy answers', async () => {
      const r = await run(['get', '--raw', '/api/v1/namespaces/default/services/web:80/proxy/']);
      return r.code === 0 ? r.stdout : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    assert.equal(viaService.trim(), 'hello-proxy');
    const viaPod = await run(['get', '--raw', '/api/v1/namespaces/default/pods/web:8080/proxy/index.html']);
    assert.deepEqual([viaPod.code, viaPod.stdout.trim()], [0, 'hello-proxy'], viaPod.stderr);
    // No port: the pod's first declared container port (--port=8080).
    assert.equal((await run(['get', '--raw', '/api/v1/namespaces/default/pods/web/proxy/'])).stdout.trim(), 'hello-proxy');
  });

  it('an unknown service port is 503 as upstream says it; a caller without services/proxy gets 403', async () => {
    const port81 = await run(['get', '--raw', '/api/v1/namespaces/default/services/web:81/proxy/']);
    assert.notEqual(port81.code, 0);
    assert.match(port81.stderr, /ServiceUnavailable.*no service port 81 found for service "web"/);
    const denied = await run(['get', '--raw', '/api/v1/namespaces/default/services/web:80/proxy/', '--as=eve']);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /Forbidden.*cannot get resource "services\/proxy"/);
  });

  it('kubectl proxy serves the same service path on a local port', async () => {
    proxy = await startTestProcess({
      name: 'kubectl proxy',
      command: 'kubectl',
      args: ['--kubeconfig', up.kubeconfig, '--cache-dir', cacheDir, 'proxy', '--address=127.0.0.1', '--port=0'],
      ready: (p) => /Starting to serve on 127\.0\.0\.1:(\d+)/.exec(p.output())?.[1],
      readyTimeoutMs: 30_000,
    });
    const port = proxy.ready;
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/namespaces/default/services/web:80/proxy/?x=1`);
    assert.equal(res.status, 200);
    assert.equal((await res.text()).trim(), 'hello-proxy');
    await proxy.stop();
  });

  it('nodes/<node>/proxy reaches the agent as the API server', async () => {
    const r = await run(['get', '--raw', `/api/v1/nodes/${NODE}/proxy/healthz`]);
    assert.deepEqual([r.code, r.stdout.trim()], [0, 'ok'], r.stderr);
  });
});
