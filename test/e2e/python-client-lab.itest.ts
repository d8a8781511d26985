// The official Python client (Debian's python3-kubernetes, run by pytest) against a lab cluster
// (`nodelet lab up` on private ports, state dir and bridge), through API server → agent →
// containerd: kubernetes.stream exec (stdout, stderr, stdin, exit code, tty over
// v4.channel.k8s.io; each session closed well inside ws's 30 s close timeout), pod logs (tail,
// timestamps, follow), kubernetes.stream.portforward to one port, to two on one WebSocket and
// beside a refused one, and namespace deletion awaited until the namespace is gone. The API-only cases (create_from_yaml, patches, watch) run against an
// in-process server: control-plane/test/integration/python-client.itest.ts.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { labDown, labUp, type LabUpResult } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { freePort, pythonClientUnavailableReason, runPytest } from '@nodelet/base/testing';
import { kubectl, type Kubectl } from './helpers.js';

let skipReason: string | false = pythonClientUnavailableReason();
if (!skipReason) requireRoot({ skip: (m) => (skipReason = m ?? 'skipped') });

describe('the official Python client against a lab: exec, port-forward, namespace deletion', { skip: skipReason }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-python-'));
  let lab: Parameters<typeof labUp>[0];
  let up: LabUpResult;
  let k: Kubectl;

  before(async () => {
    const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.243.0.0/16', bridge: 'nle-py', nodeName: 'py-node', nodeApiPort: nodePort, healthzPort };
    up = await labUp(lab);
    k = kubectl(up.kubeconfig);
    const img = up.images.busybox;
    await k('run', 'tools', `--image=${img}`, '--restart=Never', '--', 'sleep', '3600');
    await k('run', 'web', `--image=${img}`, '--restart=Never', '--', 'sh', '-c', 'mkdir -p /www /www2 && echo hello-8080 > /www/index.html && echo hello-8081 > /www2/index.html && httpd -p 8081 -h /www2 && exec httpd -f -p 8080 -h /www');
    await k('run', 'talker', `--image=${img}`, '--restart=Never', '--', 'sh', '-c', 'echo line1; echo line2; exec sleep 3600');
    await k('wait', '--for=condition=Ready', 'pod/tools', 'pod/web', 'pod/talker', '--timeout=120s');
    // Both of web's servers answer inside the pod (the two-port case relies on it).
    assert.match(await k('exec', 'web', '--', 'wget', '-qO-', 'http://127.0.0.1:8081/index.html'), /hello-8081/);
  });

  after(async () => {
    if (k) await k('delete', 'pod', '--all', '--grace-period=1').catch(() => undefined);
    if (lab) await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });

  it('pytest: exec (stdout/stderr/exit code, stdin, preloaded, tty), logs, port-forward, namespace deletion', { timeout: 300_000 }, async () => {
    const r = await runPytest(fileURLToPath(new URL('./python/test_lab.py', import.meta.url)), { NODELET_KUBECONFIG: up.kubeconfig, NODELET_NS: 'default' });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /\b10 passed\b/, r.output); // none skipped or left uncollected
  });
});
