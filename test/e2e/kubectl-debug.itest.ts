// `kubectl debug` against a lab cluster (`nodelet lab up` on private ports, state dir and bridge),
// through API server → agent → containerd: an ephemeral container added to a running pod with
// --target sees the target's processes (CRI TARGET PID namespace), its logs and an attach with
// stdin work (`kubectl debug -it` on a pty), it is reported in status.ephemeralContainerStatuses and never restarted; and
// `kubectl debug node/<node>` runs a pod in the node's PID namespace with its root at /host.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { labDown, labUp, type LabUpResult } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { pollUntil } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import { kubectl, type Kubectl } from './helpers.js';

const BRIDGE = 'nle-dbg';
const NODE = 'dbg-node';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** kubectl with stdin, for the verbs that stream. */
function kube(kubeconfig: string, cacheDir: string) {
  return (args: string[], o: { stdin?: string; timeoutMs?: number } = {}): Promise<Run> =>
    new Promise((resolve) => {
      const child = execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cacheDir, ...args], { timeout: o.timeoutMs ?? 120_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
      child.stdin?.end(o.stdin ?? '');
    });
}

interface ContainerStatusView {
  name: string;
  restartCount: number;
  state?: { running?: unknown; terminated?: { exitCode: number } };
}

let skipReason: string | false = false;
requireRoot({ skip: (m) => (skipReason = m ?? 'skipped') });

describe('kubectl debug: ephemeral containers and node debugging on real containerd', { skip: skipReason }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-debug-'));
  const cacheDir = mkdtempSync(join(tmpdir(), 'nodelet-kubectl-cache-'));
  let lab: Parameters<typeof labUp>[0];
  let up: LabUpResult;
  let k: Kubectl;
  let run: ReturnType<typeof kube>;
  let img: string;

  before(async () => {
    const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.231.0.0/16', bridge: BRIDGE, nodeName: NODE, nodeApiPort: nodePort, healthzPort };
    up = await labUp(lab);
    k = kubectl(up.kubeconfig);
    run = kube(up.kubeconfig, cacheDir);
    img = up.images.busybox;
    await k('run', 'target', `--image=${img}`, '--restart=Never', '--', 'sleep', '3600');
    await k('wait', '--for=condition=Ready', 'pod/target', '--timeout=120s');
  });

  after(async () => {
    if (k) await k('delete', 'pod', '--all', '--grace-period=1', '--wait=true', '--timeout=60s').catch(() => undefined);
    if (lab) await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
    rmSync(cacheDir, { recursive: true, force: true });
  });

  async function ephemeralStatus(pod: string, name: string): Promise<ContainerStatusView | undefined> {
    const r = await run(['get', 'pod', pod, '-o', 'json']);
    const statuses = (JSON.parse(r.stdout) as { status?: { ephemeralContainerStatuses?: ContainerStatusView[] } }).status?.ephemeralContainerStatuses ?? [];
    return statuses.find((s) => s.name === name);
  }

  it('--attach=false then logs: the ephemeral container sees the target\'s processes, exits and is not restarted', async () => {
    const r = await run(['debug', 'target', `--image=${img}`, '--target=target', '--container=dbg', '--attach=false', '--', 'sh', '-c', 'ps -o pid,args; echo done']);
    assert.equal(r.code, 0, r.stderr);
    const st = await pollUntil('dbg to have exited', async () => {
      const s = await ephemeralStatus('target', 'dbg');
      return s?.state?.terminated ? s : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(st.state!.terminated!.exitCode, 0);
    const logs = await run(['logs', 'target', '-c', 'dbg']);
    assert.equal(logs.code, 0, logs.stderr);
    // In the target's PID namespace the target's `sleep 3600` is PID 1.
    assert.match(logs.stdout, /^\s*1\s+sleep 3600$/m, logs.stdout);
    assert.match(logs.stdout, /^done$/m);
    // The target keeps running and the exited ephemeral container stays exited.
    const pod = JSON.parse((await run(['get', 'pod', 'target', '-o', 'json'])).stdout) as { status: { phase: string; containerStatuses: ContainerStatusView[] } };
    assert.equal(pod.status.phase, 'Running');
    assert.ok(pod.status.containerStatuses[0]!.state?.running, JSON.stringify(pod.status.containerStatuses));
    assert.equal((await ephemeralStatus('target', 'dbg'))?.restartCount, 0);
  });

  it('kubectl debug -it on a terminal: a shell in the ephemeral container answers what is typed, and exit ends it', async () => {
    // kubectl only allocates a TTY when its stdin is one: `script` (util-linux) runs it on a pty
    // and copies our pipe into it.
    const cmd = ['kubectl', '--kubeconfig', up.kubeconfig, '--cache-dir', cacheDir, 'debug', '-it', 'target', `--image=${img}`, '--target=target', '--container=dbgit', '--', 'sh'].join(' ');
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, TERM: 'dumb' } });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = once(child, 'exit');
    try {
      await pollUntil('the debug shell to be attached', () => out.includes("If you don't see a command prompt"), { timeoutMs: 90_000 });
      // The echo of the typed line shows `h""i-…`; only the shell's answer reads `hi-…`. Typed
      // again until it comes, since keys sent before the attach settles may be lost.
      await pollUntil('the typed command to be answered', () => {
        if (/^hi-from-the-tty\r?$/m.test(out)) return true;
        child.stdin.write('echo h""i-from-the-tty\r');
        return undefined;
      }, { timeoutMs: 30_000, intervalMs: 1_000 });
      child.stdin.write('exit\r');
      const [code] = (await Promise.race([exited, new Promise((_, reject) => setTimeout(() => reject(new Error(`kubectl debug -it did not end:\n${out}`)), 30_000).unref())])) as [number | null];
      assert.equal(code, 0, out);
    } finally {
      if (child.exitCode === null && child.pid) process.kill(child.pid, 'SIGTERM');
    }
    const st = await pollUntil('dbgit to have exited', async () => {
      const s = await ephemeralStatus('target', 'dbgit');
      return s?.state?.terminated ? s : undefined;
    }, { timeoutMs: 60_000 });
    assert.equal(st.state!.terminated!.exitCode, 0);
  });

  // Piped stdin (`echo hello | kubectl debug -i …`) is not tested: kubectl creates the ephemeral
  // container without stdinOnce, and containerd's attach then detaches stdout the moment the
  // client closes stdin, so whether the output after `read` arrives is a race (it passed under
  // load and failed on a quiet machine; with the stdin close withheld it passed). An
  // interactive session (-it, stdin kept open) is the test above.

  it('kubectl debug node/<node>: host PID namespace and the node\'s root at /host', async () => {
    const marker = join(stateDir, 'node-debug-marker');
    writeFileSync(marker, 'from-the-host\n');
    const hostInit = readFileSync('/proc/1/comm', 'utf8').trim();
    const r = await run(['debug', `node/${NODE}`, `--image=${img}`, '--attach=false', '--', 'sh', '-c', `cat /host${marker}; cat /proc/1/comm`]);
    assert.equal(r.code, 0, r.stderr);
    const name = /node-debugger-[a-z0-9-]+/.exec(r.stdout + r.stderr)?.[0];
    assert.ok(name, `${r.stdout}\n${r.stderr}`);
    await pollUntil(`${name} to succeed`, async () => {
      const phase = (await run(['get', 'pod', name, '-o', 'jsonpath={.status.phase}'])).stdout;
      if (phase === 'Failed') throw new Error(`${name} failed: ${(await run(['describe', 'pod', name])).stdout}`);
      return phase === 'Succeeded' ? true : undefined;
    }, { timeoutMs: 90_000 });
    const logs = await run(['logs', name]);
    assert.equal(logs.stdout, `from-the-host\n${hostInit}\n`, logs.stderr);
    const spec = JSON.parse((await run(['get', 'pod', name, '-o', 'json'])).stdout) as { spec: { hostPID: boolean; hostNetwork: boolean; hostIPC: boolean; nodeName: string } };
    assert.deepEqual([spec.spec.hostPID, spec.spec.hostNetwork, spec.spec.hostIPC, spec.spec.nodeName], [true, true, true, NODE]);
  });
});
