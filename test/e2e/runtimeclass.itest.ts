// RuntimeClasses end to end on a one-node lab (private ports, bridge nle-rc0, cluster CIDR
// 10.227.0.0/16) whose containerd has a `crun` handler beside `runc` (lab-runtime configures it
// when /usr/bin/crun exists): a pod on each handler, checked with `nodelet cri inspectp|inspect`
// and crun's own state; admission refusing a missing class; the agent's event for a class gone
// before the pod's sandbox was made.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify as toYaml } from 'yaml';
import { labDown, labPaths, labUp } from '@nodelet/cli';
import { hybridCgroupsWithV2Controllers } from '@nodelet/lab-runtime';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import { kubectl, type Kubectl } from './helpers.js';

const NODELET = fileURLToPath(new URL('../../bin/nodelet-dev', import.meta.url));
const CRUN = '/usr/bin/crun';
const NODE = 'rc-node-1';

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 60_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

const skip = ((): string | undefined => {
  let reason: string | undefined;
  requireRoot({ skip: (m?: string) => void (reason = m ?? 'requirements missing') });
  return reason ?? (existsSync(CRUN) ? undefined : `${CRUN} not installed (apt-get install crun)`);
})();

describe('RuntimeClass: runc and crun handlers on a lab node', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-rc-'));
  let k: Kubectl;
  let busybox = '';
  let endpoint = '';
  let lab: Parameters<typeof labUp>[0];
  const cri = async (...args: string[]): Promise<string> => {
    const r = await run(NODELET, ['cri', '-r', endpoint, ...args]);
    assert.equal(r.code, 0, `nodelet cri ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const manifest = (name: string, objects: unknown[]): string => {
    const f = join(dir, `${name}.yaml`);
    writeFileSync(f, objects.map((o) => toYaml(o)).join('---\n'));
    return f;
  };
  const pod = (name: string, runtimeClassName?: string) => ({
    apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' },
    spec: { ...(runtimeClassName ? { runtimeClassName } : {}), terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: busybox, command: ['sleep', '3600'] }] },
  });
  const runtimeClass = (name: string, handler: string) => ({ apiVersion: 'node.k8s.io/v1', kind: 'RuntimeClass', metadata: { name }, handler });

  before(async () => {
    const [apiPort, regPort, nodeApi, hz] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
    lab = { stateDir: dir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.227.0.0/16', bridge: 'nle-rc0', nodeName: NODE, nodeApiPort: nodeApi, healthzPort: hz };
    const up = await labUp(lab);
    busybox = up.images.busybox;
    endpoint = up.runtimeEndpoint;
    k = kubectl(up.kubeconfig);
  });
  after(async () => {
    try {
      const r = await labDown({ ...lab, keepState: false });
      if (r.problems.length) console.error(`lab cleanup: ${r.problems.join('; ')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a pod per handler: the sandbox records its handler and the crun pod’s container runs under crun', async () => {
    await k('apply', '-f', manifest('classes', [runtimeClass('runc', 'runc'), runtimeClass('crun', 'crun')]));
    const table = await k('get', 'runtimeclass');
    assert.match(table, /^NAME\s+HANDLER\s+AGE$/m);
    assert.match(table, /^crun\s+crun\s+\S+$/m);
    await k('apply', '-f', manifest('pods', [pod('on-runc', 'runc'), pod('on-crun', 'crun')]));
    const w = await k.try('wait', '--for=condition=Ready', 'pod/on-runc', 'pod/on-crun', '--timeout=120s');
    assert.equal(w.code, 0, `${w.stderr}\n${(await k.try('describe', 'pods', 'on-runc', 'on-crun')).stdout}`);

    const crunRoot = join(labPaths(dir).containerd, 'state', 'crun', 'k8s.io');
    // On a hybrid-cgroup host the lab runs crun through its wrapper (lab-runtime/src/crun.ts).
    const crunBinary = hybridCgroupsWithV2Controllers() ? join(labPaths(dir).containerd, 'crun-private-cgroups') : CRUN;
    for (const [name, handler, binary] of [['on-runc', 'runc', 'runc'], ['on-crun', 'crun', crunBinary]] as const) {
      const sandboxId = (await cri('pods', '--label', `io.kubernetes.pod.name=${name}`, '-q')).trim();
      assert.match(sandboxId, /^[0-9a-f]{64}$/, `one sandbox for ${name}`);
      const sandbox = JSON.parse(await cri('inspectp', sandboxId)) as { status: { runtimeHandler?: string }; info: { info: { runtimeHandler?: string } } };
      assert.equal(sandbox.status.runtimeHandler, handler, `${name}: sandbox status handler`);
      assert.equal(sandbox.info.info.runtimeHandler, handler, `${name}: containerd's sandbox info`);
      const containerId = (await cri('ps', '--pod', sandboxId, '-q', '--no-trunc')).trim();
      const container = JSON.parse(await cri('inspect', containerId)) as { info: { info: { runtimeType?: string; runtimeOptions?: { binary_name?: string } } } };
      assert.equal(container.info.info.runtimeType, 'io.containerd.runc.v2');
      assert.equal(container.info.info.runtimeOptions?.binary_name || 'runc', binary, `${name}: OCI runtime binary`);
      // The OCI runtime's own state: only crun knows the crun pod's container.
      const st = await run(CRUN, ['--root', crunRoot, 'state', containerId]);
      if (handler === 'crun') {
        assert.equal(st.code, 0, st.stderr);
        assert.equal((JSON.parse(st.stdout) as { status: string }).status, 'running');
      } else {
        assert.notEqual(st.code, 0, 'the runc pod is not in crun\'s state');
      }
    }
  });

  it('admission refuses a pod naming a missing class; a class deleted before the sandbox gives FailedCreatePodSandBox', async () => {
    const refused = await k.try('apply', '-f', manifest('missing', [pod('no-class', 'kata')]));
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /pods "no-class" is forbidden: pod rejected: RuntimeClass "kata" not found/);

    // Admitted while the class exists, scheduled once it is gone: the agent cannot resolve it.
    await k('cordon', NODE);
    await k('apply', '-f', manifest('gone', [runtimeClass('gone', 'runc'), pod('late', 'gone')]));
    await k('delete', 'runtimeclass', 'gone');
    await k('uncordon', NODE);
    await pollUntil('FailedCreatePodSandBox', async () => {
      const ev = await k('get', 'events', '--field-selector', 'involvedObject.name=late,reason=FailedCreatePodSandBox', '-o', 'jsonpath={.items[*].message}');
      return ev.includes('Failed to create pod sandbox: runtimeclass.node.k8s.io "gone" not found');
    }, { timeoutMs: 60_000 });
    assert.equal((await cri('pods', '--label', 'io.kubernetes.pod.name=late', '-q')).trim(), '', 'no sandbox was made');
  });
});
