// The kubectl-level half of kubectl-streams.itest.ts for container logs and lifecycle hooks: every
// `kubectl logs` option on known numbered lines, rotation of a fast writer (file count, --tail from
// the end, -f across a rotation), `logs -p` after a restart that followed a rotation, a preStop hook
// that runs before SIGTERM and a failing postStart's event. It runs in that file's lab, whose agent
// rotates at 1Mi, keeps 3 files and checks every second (LOG_ROTATION below); the agent-level
// proofs (200 MiB, flat memory) are in agent/test/integration/pod-failures.itest.ts.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import type { LabUpResult } from '@nodelet/cli';
import { pollUntil } from '@nodelet/base';
import type { Kubectl } from './helpers.js';

/** Agent config for the lab: rotation seen in seconds instead of at 10Mi every 10 s. */
export const LOG_ROTATION = { containerLogMaxSize: '1Mi', containerLogMaxFiles: 3, containerLogMonitorInterval: '1s' } as const;

type KubeRun = (args: string[], o?: { stdin?: string; timeoutMs?: number }) => Promise<{ code: number; stdout: string; stderr: string }>;

export interface LogsLab {
  k: Kubectl;
  run: KubeRun;
  up: LabUpResult;
  stateDir: string;
  children: ChildProcess[];
}

const PAD = 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789';
const ROTATED = /^0\.log\.\d{8}-\d{6}$/;

/** The node's log directory of one container (the lab's podLogsDir). */
async function logDir(lab: LogsLab, pod: string, container: string): Promise<string> {
  const uid = (await lab.k('get', 'pod', pod, '-o', 'jsonpath={.metadata.uid}')).trim();
  return join(lab.stateDir, 'pods-logs', `default_${pod}_${uid}`, container);
}

/** The number in the last complete `line N …` entry of a CRI log file. */
async function lastLineNumber(path: string): Promise<number> {
  const fh = await open(path, 'r');
  try {
    const { size } = await fh.stat();
    const buf = Buffer.alloc(Math.min(size, 64 * 1024));
    await fh.read(buf, 0, buf.length, size - buf.length);
    const nums = [...buf.toString('utf8').matchAll(/ F line (\d+) /g)].map((m) => Number(m[1]));
    assert.ok(nums.length > 0, `no complete line at the end of ${path}`);
    return nums[nums.length - 1]!;
  } finally {
    await fh.close();
  }
}

/** One `kubectl apply` per object, all at once. */
async function apply(lab: LogsLab, items: object[]): Promise<{ code: number; stderr: string }> {
  const rs = await Promise.all(items.map((i) => lab.run(['apply', '-f', '-'], { stdin: JSON.stringify(i) })));
  return rs.find((r) => r.code !== 0) ?? { code: 0, stderr: '' };
}

function pod(name: string, spec: Record<string, unknown>, labels: Record<string, string> = {}): object {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, labels }, spec: { terminationGracePeriodSeconds: 1, ...spec } };
}

const sh = (lab: LogsLab, name: string, script: string, extra: Record<string, unknown> = {}): object => ({ name, image: lab.up.images.busybox, command: ['sh', '-c', script], ...extra });

/** Registers the logs and hooks subtests; `lab()` is read when they run (after the lab's `before`). */
export function logsAndHooksTests(lab: () => LogsLab): void {
  it('kubectl logs: --tail, --since, --since-time, --timestamps, --limit-bytes, --all-containers, -l', { timeout: 180_000 }, async () => {
    const l = lab();
    const { k } = l;
    const numbers = 'for i in 1 2 3; do echo "line $i"; done; sleep 2; for i in 4 5; do echo "line $i"; done; exec sleep 3600';
    const made = await apply(l, [
      pod('numbers', { containers: [sh(l, 'numbers', numbers)] }),
      pod('pair', { containers: [sh(l, 'a', 'echo from-a; exec sleep 3600'), sh(l, 'b', 'echo from-b; exec sleep 3600')] }),
      ...['sel-1', 'sel-2'].map((n) => pod(n, { containers: [sh(l, 'c', 'echo "hello from $(hostname)"; exec sleep 3600')] }, { app: 'logsel' })),
    ]);
    assert.equal(made.code, 0, made.stderr);
    await k('wait', '--for=condition=Ready', 'pod/numbers', 'pod/pair', 'pod/sel-1', 'pod/sel-2', '--timeout=120s');
    const all = 'line 1\nline 2\nline 3\nline 4\nline 5\n';
    await pollUntil('the five numbered lines', async () => ((await k('logs', 'numbers')) === all ? true : undefined), { timeoutMs: 30_000 });

    assert.equal(await k('logs', 'numbers', '--tail=3'), 'line 3\nline 4\nline 5\n');
    assert.equal(await k('logs', 'numbers', '--limit-bytes=10'), 'line 1\nlin');
    assert.equal(await k('logs', 'numbers', '--since=1h'), all);
    const stamped = (await k('logs', 'numbers', '--timestamps')).trimEnd().split('\n');
    assert.equal(stamped.length, 5);
    for (const [i, s] of stamped.entries()) assert.match(s, new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d+Z line ${i + 1}$`));
    // Lines 1–3 came 2 s before line 4, so line 4's whole second excludes them (kubectl sends seconds).
    const fourth = stamped[3]!.split(' ')[0]!;
    assert.equal(await k('logs', 'numbers', `--since-time=${fourth.replace(/\.\d+Z$/, 'Z')}`), 'line 4\nline 5\n');
    const fifthMs = Date.parse(stamped[4]!.split(' ')[0]!);
    await pollUntil('two seconds after the last line', async () => (Date.now() > fifthMs + 2_000 ? true : undefined), { timeoutMs: 10_000 });
    assert.equal(await k('logs', 'numbers', '--since=1s'), '');

    // kubectl keeps its requests in a Go map: the containers come in either order.
    const sorted = (s: string): string[] => s.trimEnd().split('\n').sort();
    assert.deepEqual(sorted(await k('logs', 'pair', '--all-containers')), ['from-a', 'from-b']);
    assert.deepEqual(sorted(await k('logs', 'pair', '--all-containers', '--prefix')), ['[pod/pair/a] from-a', '[pod/pair/b] from-b']);
    assert.deepEqual(sorted(await k('logs', '-l', 'app=logsel', '--prefix')), ['[pod/sel-1/c] hello from sel-1', '[pod/sel-2/c] hello from sel-2']);
    await k('delete', 'pod', 'numbers', 'pair', 'sel-1', 'sel-2', '--wait=false');
  });

  it('a fast writer is rotated: at most containerLogMaxFiles files, --tail=10 from the end, -f across a rotation', { timeout: 180_000 }, async (t) => {
    const l = lab();
    const { k } = l;
    // A fifth of a CPU: still over 1Mi a second (a rotation at every check), without starving the
    // machine or making -f read many MiB through the API server.
    const writer = sh(l, 'fast', `i=0; while :; do i=$((i+1)); echo "line $i ${PAD}"; done`, { resources: { limits: { cpu: '200m' } } });
    const made = await apply(l, [pod('fast', { containers: [writer] })]);
    assert.equal(made.code, 0, made.stderr);
    t.after(() => k('delete', 'pod', 'fast', '--wait=false').then(() => undefined, () => undefined));
    const t0 = performance.now();
    const phases: string[] = [];
    const phase = (name: string): number => phases.push(`${name} ${Math.round(performance.now() - t0)} ms`);
    await k('wait', '--for=condition=Ready', 'pod/fast', '--timeout=120s');
    phase('ready');
    const dir = await logDir(l, 'fast', 'fast');
    let mostFiles = 0;
    const files = (): string[] => {
      const names = readdirSync(dir).filter((n) => !n.endsWith('.tmp')); // a compression in progress
      mostFiles = Math.max(mostFiles, names.length);
      return names;
    };
    await pollUntil('a first rotation', async () => (files().some((n) => ROTATED.test(n)) ? true : undefined), { timeoutMs: 30_000, intervalMs: 100 });
    phase('rotated');

    // -f: first output, then a rotation it was open across, then a line written after that rotation.
    const follow = spawn('kubectl', ['--kubeconfig', l.up.kubeconfig, 'logs', '-f', '--tail=1', 'fast'], { stdio: ['ignore', 'pipe', 'pipe'] });
    l.children.push(follow);
    let newest = 0;
    let partial = '';
    let stderr = '';
    follow.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    follow.stdout!.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      for (const s of lines) {
        const m = /^line (\d+) /.exec(s);
        if (m) newest = Math.max(newest, Number(m[1]));
      }
    });
    await pollUntil(`kubectl logs -f to print (stderr: ${stderr})`, async () => (newest > 0 ? true : undefined), { timeoutMs: 30_000 });
    phase('-f printed');
    const before = new Set(files());
    const rotatedNow = await pollUntil('a rotation while kubectl logs -f runs', async () => files().find((n) => ROTATED.test(n) && !before.has(n)), { timeoutMs: 30_000, intervalMs: 100 });
    const atRotation = await lastLineNumber(join(dir, rotatedNow));
    phase('rotated again');
    await pollUntil(`kubectl logs -f to print a line past ${atRotation} (newest so far ${newest}, stderr: ${stderr})`, async () => (newest > atRotation ? true : undefined), { timeoutMs: 30_000 });
    phase('-f past it');
    assert.equal(follow.exitCode, null, 'kubectl logs -f still running');
    follow.kill('SIGINT');

    const started = performance.now();
    const tail = await k('logs', 'fast', '--tail=10');
    const tailMs = Math.round(performance.now() - started);
    const nums = tail.trimEnd().split('\n').map((s) => {
      assert.match(s, new RegExp(`^line \\d+ ${PAD}$`), 'a complete line');
      return Number(s.split(' ')[1]);
    });
    assert.equal(nums.length, 10);
    assert.deepEqual(nums, nums.map((_, i) => nums[0]! + i), 'ten consecutive lines');
    assert.ok(tailMs < 2_000, `kubectl logs --tail=10 took ${tailMs} ms`);
    files();
    assert.ok(mostFiles <= LOG_ROTATION.containerLogMaxFiles, `at most ${LOG_ROTATION.containerLogMaxFiles} files, saw ${mostFiles}`);
    t.diagnostic(`kubectl logs --tail=10 of a rotating log: ${tailMs} ms; -f crossed the rotation at line ${atRotation}; most files seen ${mostFiles}; ${phases.join(', ')}`);
  });

  it('kubectl logs -p after the container restarted following a rotation', { timeout: 180_000 }, async () => {
    const l = lab();
    const { k } = l;
    // ~3 MiB of log, a rotation during the pause (checked every second), then last words and exit 1.
    const script = `i=0; while [ $i -lt 30000 ]; do i=$((i+1)); echo "line $i ${PAD}"; done; sleep 3; echo last words; exit 1`;
    const made = await apply(l, [pod('rotor', { containers: [sh(l, 'rotor', script)] })]);
    assert.equal(made.code, 0, made.stderr);
    try {
      await pollUntil('rotor to restart', async () => (Number(await k('get', 'pod', 'rotor', '-o', 'jsonpath={.status.containerStatuses[0].restartCount}')) >= 1 ? true : undefined), { timeoutMs: 120_000 });
      const dir = await logDir(l, 'rotor', 'rotor');
      assert.ok(readdirSync(dir).some((n) => ROTATED.test(n)), `the first attempt's log was rotated: ${readdirSync(dir).join(' ')}`);
      const previous = await k('logs', 'rotor', '-p');
      assert.ok(previous.endsWith('line 30000 ' + PAD + '\nlast words\n') || previous === 'last words\n', `the previous attempt's current file: …${previous.slice(-200)}`);
      assert.ok(!previous.startsWith('line 1 '), 'the rotated start is not in the current file');
      // --tail continues into the newest rotated file when the current one is short.
      assert.equal(await k('logs', 'rotor', '-p', '--tail=3'), `line 29999 ${PAD}\nline 30000 ${PAD}\nlast words\n`);
    } finally {
      await k('delete', 'pod', 'rotor', '--wait=false');
    }
  });

  it('a preStop hook runs before SIGTERM; a failing postStart is a FailedPostStartHook event', { timeout: 180_000 }, async () => {
    const l = lab();
    const { k } = l;
    const host = mkdtempSync(join(tmpdir(), 'nodelet-e2e-hooks-'));
    try {
      // The hook sleeps first: a SIGTERM sent alongside it would write "term" before "prestop".
      const main = `trap 'echo term >> /h/order; exit 0' TERM; echo started >> /h/order; while :; do sleep 1 & wait $!; done`;
      const made = await apply(l, [
        pod('hooks', {
          terminationGracePeriodSeconds: 20,
          volumes: [{ name: 'h', hostPath: { path: host, type: 'Directory' } }],
          containers: [sh(l, 'hooks', main, {
            volumeMounts: [{ name: 'h', mountPath: '/h' }],
            lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 1; echo prestop >> /h/order'] } } },
          })],
        }),
        pod('poststart-fail', {
          restartPolicy: 'Never',
          containers: [sh(l, 'c', 'exec sleep 3600', { lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 7'] } } } })],
        }),
      ]);
      assert.equal(made.code, 0, made.stderr);
      await k('wait', '--for=condition=Ready', 'pod/hooks', '--timeout=120s');
      await pollUntil('the container to start', async () => (readFileSync(join(host, 'order'), 'utf8') === 'started\n' ? true : undefined), { timeoutMs: 30_000 });
      await k('delete', 'pod', 'hooks', '--timeout=60s');
      assert.equal(readFileSync(join(host, 'order'), 'utf8'), 'started\nprestop\nterm\n');

      const reasons = async (): Promise<string[]> => {
        const list = JSON.parse(await k('get', 'events', '--field-selector', 'involvedObject.name=poststart-fail', '-o', 'json')) as { items: { reason?: string }[] };
        return list.items.map((e) => e.reason ?? '');
      };
      await pollUntil('a FailedPostStartHook event', async () => ((await reasons()).includes('FailedPostStartHook') ? true : undefined), { timeoutMs: 60_000 });
      assert.match(await k('describe', 'pod', 'poststart-fail'), /Warning\s+FailedPostStartHook/);
      await k('delete', 'pod', 'poststart-fail', '--wait=false');
    } finally {
      rmSync(host, { recursive: true, force: true });
    }
  });
}
