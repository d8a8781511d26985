import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import type { Container, Pod } from '@nodelet/api';
import { runLifecycleHook, type HookDeps } from './lifecycle-hooks.js';

const pod: Pod = { metadata: { name: 'web', namespace: 'ns', uid: 'u1' }, spec: { containers: [] } };

function deps(exit: { exitCode: number; stdout?: string; stderr?: string }, seen: unknown[] = []): HookDeps {
  return {
    clock: systemClock,
    runtimeRequestTimeoutMs: 1000,
    runtime: {
      execSync: async (req, opts) => {
        seen.push({ cmd: req.cmd, timeout: req.timeout, timeoutMs: opts?.timeoutMs });
        return { exitCode: exit.exitCode, stdout: Buffer.from(exit.stdout ?? ''), stderr: Buffer.from(exit.stderr ?? '') };
      },
    },
  };
}

test('exec: success, and kubelet\'s message for a non-zero exit; no CRI timeout unless given', async () => {
  const c: Container = { name: 'app', image: 'x' };
  const signal = new AbortController().signal;
  const seen: unknown[] = [];
  assert.equal(await runLifecycleHook({ exec: { command: ['true'] } }, { pod, container: c, containerId: 'id' }, deps({ exitCode: 0 }, seen), { signal }), undefined);
  assert.deepEqual(seen, [{ cmd: ['true'], timeout: 0, timeoutMs: Infinity }]);
  const msg = await runLifecycleHook({ exec: { command: ['sh', '-c', 'exit 3'] } }, { pod, container: c, containerId: 'id' }, deps({ exitCode: 3, stdout: 'o', stderr: 'bad' }), { signal, timeoutS: 7 });
  assert.equal(msg, 'Exec lifecycle hook ([sh -c exit 3]) for Container "app" in Pod "web_ns(u1)" failed - error: command \'sh -c exit 3\' exited with 3: bad, message: "obad"');
});

test('httpGet: any response succeeds, the port resolves by name, a refused connection fails with the URL', async (t) => {
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    paths.push(`${req.url} ${req.headers['user-agent']} ${req.headers['x-hook']}`);
    res.writeHead(500).end('no');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const c: Container = { name: 'app', image: 'x', ports: [{ name: 'http', containerPort: port }] };
  const signal = new AbortController().signal;
  const d = deps({ exitCode: 0 });
  const ok = await runLifecycleHook({ httpGet: { port: 'http', path: 'hook', httpHeaders: [{ name: 'X-Hook', value: 'v' }] } }, { pod, container: c, containerId: 'id', podIP: '127.0.0.1' }, d, { signal });
  assert.equal(ok, undefined, 'a 500 is still a response (kubelet checks only the transport)');
  assert.deepEqual(paths, ['/hook kube-lifecycle/1.32 v']);
  const closed = await freePort();
  const failed = await runLifecycleHook({ httpGet: { port: closed, path: '/x' } }, { pod, container: c, containerId: 'id', podIP: '127.0.0.1' }, d, { signal });
  assert.match(failed!, new RegExp(`^HTTP lifecycle hook \\(/x\\) for Container "app" in Pod "web_ns\\(u1\\)" failed - error: Get "http://127.0.0.1:${closed}/x": .*ECONNREFUSED`));
  const noPort = await runLifecycleHook({ httpGet: { port: 'nope' } }, { pod, container: c, containerId: 'id', podIP: '127.0.0.1' }, d, { signal });
  assert.match(noPort!, /couldn't find port: nope in container app/);
});

test('an aborted hook rejects with AbortError; tcpSocket is not a lifecycle handler', async () => {
  const c: Container = { name: 'app', image: 'x' };
  const ac = new AbortController();
  const p = runLifecycleHook({ sleep: { seconds: 60 } }, { pod, container: c, containerId: 'id' }, deps({ exitCode: 0 }), { signal: ac.signal });
  ac.abort();
  await assert.rejects(p, { name: 'AbortError' });
  const msg = await runLifecycleHook({ tcpSocket: { port: 80 } }, { pod, container: c, containerId: 'id' }, deps({ exitCode: 0 }), { signal: new AbortController().signal });
  assert.match(msg!, /^invalid handler/);
});
