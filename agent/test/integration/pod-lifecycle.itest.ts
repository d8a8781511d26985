import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);
import { PODS, CONFIGMAPS } from '@nodelet/api';
import { netnsPathFromSandboxInfo } from '@nodelet/cri-client';
import { skipUnlessRoot, startHarness, podSpec, getPod, inCidr, BRIDGE, type Harness } from './harness.js';
import { pollUntil } from '@nodelet/base';

function nodeGet(h: Harness, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const pki = join(h.dir, 'server', 'pki');
    const cert = readFileSync(join(pki, 'apiserver-kubelet-client.crt'));
    const key = readFileSync(join(pki, 'apiserver-kubelet-client.key'));
    const req = https.get({ host: '127.0.0.1', port: h.agent.nodeApiPort, path, cert, key, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
  });
}

async function exec(h: Harness, containerId: string, cmd: string[]): Promise<string> {
  const r = await h.agent.cri.runtime.execSync({ containerId, cmd, timeout: 10 });
  assert.equal(r.exitCode, 0, `exec ${cmd.join(' ')}: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

test('a pod with an init container and two containers runs, is Ready with an IP in the node CIDR, and is deleted without leftovers', async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('life');
  t.after(() => h.stop());
  const img = h.rt.images.busybox;
  await h.api.create(CONFIGMAPS, { metadata: { name: 'cfg', namespace: 'default' }, data: { greeting: 'hello from a configmap' } });
  await h.api.create(PODS, podSpec(h, 'web', {
    volumes: [{ name: 'shared', emptyDir: {} }],
    initContainers: [{ name: 'init', image: img, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'echo initialised > /shared/init.txt'], volumeMounts: [{ name: 'shared', mountPath: '/shared' }] }],
    containers: [
      {
        name: 'main',
        image: img,
        imagePullPolicy: 'IfNotPresent',
        command: ['sh', '-c'],
        args: ['echo main started; echo $(GREETING) > /shared/greeting; exec httpd -f -p 8080 -h /shared'],
        workingDir: '/shared',
        ports: [{ containerPort: 8080 }],
        env: [
          { name: 'GREETING', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'greeting' } } },
          { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          { name: 'POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
        ],
        volumeMounts: [{ name: 'shared', mountPath: '/shared' }],
        resources: { limits: { memory: '64Mi', cpu: '250m' } },
      },
      { name: 'side', image: img, imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', 'trap "exit 0" TERM; while true; do sleep 0.2; done'], volumeMounts: [{ name: 'shared', mountPath: '/data' }] },
    ],
  }));

  const pod = await pollUntil('pod Running and Ready', async () => {
    const p = await getPod(h, 'web');
    return p.status?.phase === 'Running' && p.status.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? p : undefined;
  }, { timeoutMs: 60_000 });
  const st = pod.status!;
  assert.ok(inCidr(st.podIP, h.podCIDR), `pod IP ${st.podIP} in ${h.podCIDR}`);
  assert.deepEqual(st.podIPs, [{ ip: st.podIP }]);
  for (const type of ['PodScheduled', 'PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready']) {
    assert.equal(st.conditions!.find((c) => c.type === type)?.status, 'True', type);
  }
  assert.equal(st.initContainerStatuses![0]!.state!.terminated!.reason, 'Completed');
  const main = st.containerStatuses!.find((c) => c.name === 'main')!;
  assert.match(main.containerID!, /^containerd:\/\/[0-9a-f]{64}$/);
  assert.ok(main.imageID, 'imageID set');
  assert.equal(main.restartCount, 0);
  assert.ok(st.startTime && st.hostIP);

  // env, command/args, workingDir, emptyDir shared with the init container, port: checked inside.
  const id = main.containerID!.replace('containerd://', '');
  const env = await exec(h, id, ['env']);
  assert.match(env, /^GREETING=hello from a configmap$/m);
  assert.match(env, /^POD_NAME=web$/m);
  assert.match(env, new RegExp(`^POD_IP=${st.podIP!.replace(/\./g, '\\.')}$`, 'm'));
  assert.equal((await exec(h, id, ['pwd'])).trim(), '/shared');
  assert.equal((await exec(h, id, ['cat', '/shared/init.txt'])).trim(), 'initialised');
  const sideId = st.containerStatuses!.find((c) => c.name === 'side')!.containerID!.replace('containerd://', '');
  assert.equal((await exec(h, sideId, ['cat', '/data/greeting'])).trim(), 'hello from a configmap');
  assert.equal((await exec(h, sideId, ['wget', '-q', '-O', '-', `http://${st.podIP}:8080/init.txt`])).trim(), 'initialised');

  // logs through the node API (what the API server's pods/log proxy calls)
  const logs = await nodeGet(h, '/containerLogs/default/web/main?timestamps=true');
  assert.equal(logs.status, 200);
  assert.match(logs.body, /^\d{4}-\d\d-\d\dT\S+ main started$/m);
  // kubectl logs / exec through the API server's proxy to the node API
  // (async: the API server runs in this process, a blocking spawnSync would starve it)
  const kubectl = async (...args: string[]) => {
    try {
      return (await execFileP('kubectl', ['--kubeconfig', h.cp.kubeconfigPath, ...args], { timeout: 20_000 })).stdout;
    } catch (err) {
      assert.fail(`kubectl ${args.join(' ')}: ${(err as { stderr?: string }).stderr ?? String(err)}`);
    }
  };
  if (spawnSync('sh', ['-c', 'command -v kubectl']).status === 0) {
    assert.match(await kubectl('logs', 'web', '-c', 'main'), /^main started$/m);
    assert.equal((await kubectl('exec', 'web', '-c', 'main', '--', 'cat', '/shared/init.txt')).trim(), 'initialised');
    assert.match(await kubectl('exec', 'web', '-c', 'side', '--', 'sh', '-c', 'echo $HOSTNAME'), /^web$/m);
  } else {
    t.diagnostic('kubectl not installed: kubectl logs/exec not checked');
  }
  const pods = JSON.parse((await nodeGet(h, '/pods')).body);
  assert.ok(pods.items.some((p: { metadata: { name: string } }) => p.metadata.name === 'web'));
  const metrics = await nodeGet(h, '/metrics');
  assert.match(metrics.body, /^kubelet_running_pods 1$/m);

  // graceful delete: stopped in order, then gone from the API, and nothing left on the node.
  const sandboxes = (await h.agent.cri.runtime.listPodSandbox({})).items;
  assert.equal(sandboxes.length, 1);
  const verbose = await h.agent.cri.runtime.podSandboxStatus({ podSandboxId: sandboxes[0]!.id, verbose: true });
  const netns = netnsPathFromSandboxInfo(verbose.info);
  assert.ok(netns && existsSync(netns), `sandbox netns ${netns} exists`);
  await h.api.delete(PODS, 'web', { namespace: 'default', gracePeriodSeconds: 5 });
  await pollUntil('pod removed from the API', async () => {
    try {
      await getPod(h, 'web');
      return false;
    } catch {
      return true;
    }
  }, { timeoutMs: 30_000 });
  const [s, c] = await Promise.all([h.agent.cri.runtime.listPodSandbox({}), h.agent.cri.runtime.listContainers({})]);
  assert.equal(s.items.length, 0, 'no sandbox left');
  assert.equal(c.containers.length, 0, 'no container left');
  assert.ok(!existsSync(netns!), `netns ${netns} removed`);
  const ipam = join(h.dir, 'ipam', 'nodelet-pods');
  assert.ok(!existsSync(join(ipam, st.podIP!)), 'IP released');
  const veths = readdirSync(`/sys/class/net/${BRIDGE}/brif`);
  assert.deepEqual(veths, [], 'no veth on the bridge');
  assert.ok(!existsSync(join(h.dir, 'root', 'pods', pod.metadata.uid!)), 'pod dir removed');
  assert.ok(!existsSync(`/var/log/pods/default_web_${pod.metadata.uid}`), 'log dir removed');
  await pollUntil('runtime cache entry dropped at the next relist', () => h.agent.pleg.all().size === 0, { timeoutMs: 5000 });
  const reasons = h.agent.events.recent.filter((e) => e.pod === 'default/web').map((e) => e.reason);
  for (const r of ['Created', 'Started', 'Killing']) assert.ok(reasons.includes(r), `event ${r} in ${reasons}`);
});
