// Every streaming kubectl verb against a lab cluster (`nodelet lab up` on private ports, state dir
// and bridge), through API server → agent → containerd: exec exit codes and stdin that ends (over
// WebSocket v5 and over SPDY), kubectl cp of 50 MiB both ways, attach, `kubectl run -it --rm` in a
// tmux pane, port-forward to pod/deploy/svc with several ports and 20 parallel curls (WebSocket
// tunnel and plain SPDY), @kubernetes/client-node's Exec (stdin) and PortForward; and, in the
// same lab, container logs (every kubectl logs option, rotation, -f across it, -p) and lifecycle
// hooks (kubectl-logs-hooks.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { PassThrough } from 'node:stream';
import * as k8s from '@kubernetes/client-node';
import { labDown, labUp, type LabUpResult } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { freePort, startTestProcess, type TestProcess } from '@nodelet/base/testing';
import { kubectl, type Kubectl } from './helpers.js';
import { LOG_ROTATION, logsAndHooksTests } from './kubectl-logs-hooks.js';

const BRIDGE = 'nle-strm';
const MiB = 1024 * 1024;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl with stdin and environment, for the verbs that stream. */
function kube(kubeconfig: string, cacheDir: string) {
  return (args: string[], o: { stdin?: string | Buffer; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { timeout: o.timeoutMs ?? 180_000, maxBuffer: 64 * MiB, env: { ...process.env, ...o.env } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(o.stdin ?? '');
    });
}

/** `kubectl port-forward …` until stopped; ready once it printed every "Forwarding from". */
function portForward(kubeconfig: string, args: string[], env: Record<string, string> = {}): Promise<TestProcess<true>> {
  const ports = args.filter((a) => /^\d+:\d+$/.test(a)).length;
  return startTestProcess({
    name: 'kubectl port-forward',
    command: 'kubectl',
    args: ['--kubeconfig', kubeconfig, 'port-forward', ...args],
    env: { ...process.env, ...env },
    ready: (p) => p.output().split('Forwarding from 127.0.0.1').length - 1 >= ports || undefined,
    readyTimeoutMs: 30_000,
    graceMs: 5_000,
  });
}

function curl(port: number, path: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile('curl', ['-sS', '--max-time', '20', `http://127.0.0.1:${port}${path}`], (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }));
  });
}

/** Mount points below `dir` (from /proc/self/mountinfo). */
function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m.startsWith(`${dir}/`));
}

function tmux(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => execFile('tmux', args, (err, stdout) => (err ? reject(err) : resolve(stdout))));
}

let skipReason: string | false = false;
requireRoot({ skip: (m) => (skipReason = m ?? 'skipped') });

describe('kubectl streams: exec, cp, attach, run -it, port-forward, client-node, logs, hooks', { skip: skipReason }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-streams-'));
  const cacheDir = mkdtempSync(join(tmpdir(), 'nodelet-kubectl-cache-'));
  let lab: Parameters<typeof labUp>[0];
  let up: LabUpResult;
  let k: Kubectl;
  let run: ReturnType<typeof kube>;
  const children: ChildProcess[] = [];
  const forwards: TestProcess[] = [];

  before(async () => {
    const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.239.0.0/16', bridge: BRIDGE, nodeName: 'strm-node', nodeApiPort: nodePort, healthzPort, agentConfig: LOG_ROTATION };
    up = await labUp(lab);
    k = kubectl(up.kubeconfig);
    run = kube(up.kubeconfig, cacheDir);
    const img = up.images.busybox;
    // web: two HTTP servers (8080, 8081) behind a Deployment and a Service; tools: a shell to exec in.
    const web = 'mkdir -p /www /www2 && echo hello-8080 > /www/index.html && echo hello-8081 > /www2/index.html && head -c 1048576 /dev/zero > /www/big && httpd -p 8081 -h /www2 && exec httpd -f -p 8080 -h /www';
    await k('create', 'deployment', 'web', `--image=${img}`, '--', 'sh', '-c', web);
    await k('expose', 'deployment', 'web', '--port=80', '--target-port=8080');
    await k('run', 'tools', `--image=${img}`, '--restart=Never', '--', 'sleep', '3600');
    await k('wait', '--for=condition=Ready', 'pod', '-l', 'app=web', '--timeout=120s');
    await k('wait', '--for=condition=Ready', 'pod/tools', '--timeout=120s');
  });

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    await Promise.all(forwards.map((f) => f.stop()));
    await tmux('kill-session', '-t', 'nle-strm').catch(() => undefined);
    // The agent unmounts a pod's volumes when the pod goes: delete them while it still runs.
    if (k) {
      await k('delete', 'deployment,service,pod', '--all', '--grace-period=1', '--wait=false').catch(() => undefined);
      await pollUntil('the agent to unmount every pod volume', async () => (mountsUnder(stateDir).length === 0 ? true : undefined), { timeoutMs: 120_000 }).catch(() => undefined);
    }
    // Whatever is still mounted would make labDown's removal of the state dir fail.
    for (const m of mountsUnder(stateDir).reverse()) execFileSync('umount', ['-l', m]);
    if (lab) await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  for (const [transport, env] of [['WebSocket v5', {}], ['SPDY', { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false' }]] as const) {
    it(`exec over ${transport}: stdin that ends, exit codes`, async () => {
      // -v=4 shows client-go falling back from WebSocket to SPDY, which must not happen here.
      const wc = await run(['exec', '-v=4', '-i', 'tools', '--', 'wc', '-l'], { stdin: 'a\nb\n', env, timeoutMs: 30_000 });
      assert.deepEqual([wc.code, wc.stdout.trim()], [0, '2'], wc.stderr);
      if (transport !== 'SPDY') assert.doesNotMatch(wc.stderr, /fallback/i);
      const cat = await run(['exec', '-i', 'tools', '--', 'cat'], { stdin: 'data\n', env, timeoutMs: 30_000 });
      assert.deepEqual([cat.code, cat.stdout], [0, 'data\n'], cat.stderr);
      const three = await run(['exec', 'tools', '--', 'sh', '-c', 'echo out; echo err >&2; exit 3'], { env });
      assert.deepEqual([three.code, three.stdout, three.stderr.includes('err\n')], [3, 'out\n', true]);
    });
  }

  it('kubectl cp of 50 MiB both ways keeps the bytes', { timeout: 300_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-cp-'));
    try {
      const data = randomBytes(50 * MiB);
      const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
      writeFileSync(join(dir, 'f'), data);
      const to = await run(['cp', join(dir, 'f'), 'default/tools:/tmp/f'], { timeoutMs: 240_000 });
      assert.equal(to.code, 0, to.stderr);
      const inPod = await run(['exec', 'tools', '--', 'sha256sum', '/tmp/f']);
      assert.equal(inPod.stdout.split(' ')[0], sha(data));
      const back = await run(['cp', 'default/tools:/tmp/f', join(dir, 'back')], { timeoutMs: 240_000 });
      assert.equal(back.code, 0, back.stderr);
      assert.equal(sha(readFileSync(join(dir, 'back'))), sha(data));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('kubectl attach: our stdin reaches the main process, its output comes back, EOF ends it', async () => {
    const pod = {
      apiVersion: 'v1', kind: 'Pod', metadata: { name: 'echoer' },
      spec: { restartPolicy: 'Never', containers: [{ name: 'echoer', image: up.images.busybox, stdin: true, stdinOnce: true, command: ['sh', '-c', 'while read l; do echo "echo:$l"; done; echo bye'] }] },
    };
    await run(['apply', '-f', '-'], { stdin: JSON.stringify(pod) });
    await k('wait', '--for=condition=Ready', 'pod/echoer', '--timeout=120s');
    const r = await run(['attach', '-i', 'echoer'], { stdin: 'hello\n', timeoutMs: 60_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /echo:hello\n(.|\n)*bye/);
  });

  it('kubectl run -it --rm in a tmux pane: a prompt, a command, exit, and no pod left', { timeout: 180_000 }, async () => {
    const cmd = `kubectl --kubeconfig ${up.kubeconfig} run shell -it --rm --restart=Never --image=${up.images.busybox} -- sh`;
    await tmux('new-session', '-d', '-s', 'nle-strm', '-x', '120', '-y', '40', cmd);
    await tmux('set-option', '-t', 'nle-strm', 'remain-on-exit', 'on');
    const screen = (): Promise<string> => tmux('capture-pane', '-p', '-t', 'nle-strm');
    await pollUntil('a shell prompt in the pane', async () => {
      if ((await screen()).includes('/ #')) return true;
      await tmux('send-keys', '-t', 'nle-strm', 'Enter'); // kubectl may attach after the first prompt was printed
      return undefined;
    }, { timeoutMs: 120_000 });
    await tmux('send-keys', '-t', 'nle-strm', 'echo hello-$((6*7))', 'Enter');
    await pollUntil('the command output', async () => ((await screen()).includes('hello-42') ? true : undefined), { timeoutMs: 30_000 });
    await tmux('send-keys', '-t', 'nle-strm', 'exit', 'Enter');
    await pollUntil('kubectl to delete the pod', async () => ((await screen()).includes('pod "shell" deleted') ? true : undefined), { timeoutMs: 60_000 });
    await tmux('kill-session', '-t', 'nle-strm');
    await pollUntil('no pod "shell"', async () => ((await k('get', 'pods', '--no-headers', '--ignore-not-found', 'shell')).trim() === '' ? true : undefined), { timeoutMs: 60_000 });
  });

  for (const [transport, env] of [['WebSocket tunnel', {}], ['SPDY', { KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' }]] as const) {
    it(`port-forward (${transport}): pod with two ports, deploy and svc, 20 parallel curls`, { timeout: 180_000 }, async () => {
      const [a, b] = [await freePort(), await freePort()];
      const pf = await portForward(up.kubeconfig, ['-v=4', 'pod/' + (await k('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}')).trim(), `${a}:8080`, `${b}:8081`], env);
      forwards.push(pf);
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => curl(i % 2 ? b : a, '/index.html')));
      for (const [i, r] of results.entries()) assert.deepEqual([r.code, r.stdout], [0, i % 2 ? 'hello-8081\n' : 'hello-8080\n'], r.stderr);
      // The tunnel was used, not client-go's fallback to plain SPDY.
      if (transport !== 'SPDY') assert.doesNotMatch(pf.output(), /fallback/i);
      const big = await curl(a, '/big');
      assert.equal(big.stdout.length, MiB);
      await pf.kill('SIGINT');
      for (const target of ['deploy/web', 'svc/web']) {
        const p = await freePort();
        const remote = target === 'svc/web' ? 80 : 8080;
        const f = await portForward(up.kubeconfig, [target, `${p}:${remote}`], env);
        forwards.push(f);
        const rs = await Promise.all(Array.from({ length: 20 }, () => curl(p, '/index.html')));
        assert.ok(rs.every((r) => r.code === 0 && r.stdout === 'hello-8080\n'), `${target}: ${JSON.stringify(rs.filter((r) => r.code !== 0))}`);
        await f.kill('SIGINT');
      }
      // A closed port inside the pod: the error stream says so and kubectl reports it.
      const q = await freePort();
      const refused = await portForward(up.kubeconfig, ['deploy/web', `${q}:9`], env);
      forwards.push(refused);
      const r = await curl(q, '/');
      assert.notEqual(r.code, 0);
      await pollUntil('kubectl to report the refused connection', async () => (/refused/.test(refused.output()) ? true : undefined), { timeoutMs: 20_000 });
      await refused.kill('SIGINT');
    });
  }

  it('@kubernetes/client-node: Exec with stdin, PortForward', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(up.kubeconfig);
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (d: Buffer) => (out += d.toString()));
    const status = new Promise<k8s.V1Status>((resolve) => {
      void new k8s.Exec(kc).exec('default', 'tools', 'tools', ['wc', '-l'], stdout, null, stdin, false, (s) => resolve(s));
    });
    stdin.end('a\nb\n');
    assert.equal((await status).status, 'Success');
    await pollUntil('wc output', async () => (out.trim() === '2' ? true : undefined), { timeoutMs: 10_000 });

    const podName = (await k('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[0].metadata.name}')).trim();
    const forward = new k8s.PortForward(kc);
    const server = createServer((sock: Socket) => void forward.portForward('default', podName, [8080], sock, null, sock));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const r = await curl(port, '/index.html');
      assert.deepEqual([r.code, r.stdout], [0, 'hello-8080\n'], r.stderr);
    } finally {
      server.close();
    }
  });

  logsAndHooksTests(() => ({ k, run, up, stateDir, children }));
});
