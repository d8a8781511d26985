// Fuzzing a real `nodelet agent` process (private containerd, in-process API server for its
// TokenReviews): the corpus of fuzz-corpus.ts against the node API's TLS port. Malformed
// requests must get a 4xx Status, ordinary errors a 4xx (kubelet's are text), and the agent must
// stay up, log no unhandled rejection or uncaught exception, and still answer at the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { startAgentProcess } from '@nodelet/base/testing';
import { NODES } from '@nodelet/api';
import { rawExchange, type RawTarget } from '@nodelet/api/testing';
import { skipUnlessRoot, startHarness } from '../../agent/test/integration/harness.js';
import { commonCorpus, req, runCorpus, type FuzzCase } from './fuzz-corpus.js';


function agentCorpus(token: string): FuzzCase[] {
  const auth = `Authorization: Bearer ${token}`;
  const deep = `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
  return [
    { name: 'POST with a 10 MiB body', parts: req('POST /pods HTTP/1.1', [auth, 'Content-Type: application/json'], Buffer.alloc(10 * 1024 * 1024, 0x20)), expect: 405, status: false },
    { name: 'POST with a deeply nested body', parts: req('POST /pods HTTP/1.1', [auth, 'Content-Type: application/json'], deep), expect: 405, status: false },
    { name: 'logs of a pod this node does not run', parts: req('GET /containerLogs/default/nopod/c?tailLines=abc HTTP/1.1', [auth]), expect: 404, status: false },
    { name: 'logs without a container', parts: req('GET /containerLogs/default/nopod HTTP/1.1', [auth]), expect: 400, status: false },
    { name: 'exec without an upgrade', parts: req('GET /exec/default/nopod/c?command=sh HTTP/1.1', [auth]), expect: 400, status: false },
  ];
}

test('fuzzing nodelet agent: every malformed request gets a 4xx and the agent stays up', { timeout: 240_000 }, async (t) => {
  if (!skipUnlessRoot(t)) return;
  const h = await startHarness('fuzz', {}, 11, { inProcessAgent: false });
  const agent = await startAgentProcess({ args: h.agentArgs });
  t.after(async () => {
    await h.stop();
    await agent.stop();
  });
  const exited = (): string | undefined => {
    const e = agent.exited();
    return e && String(e.code ?? e.signal);
  };
  const output = (): string => agent.output();
  const port = await pollUntil(
    'the agent to register its node API port',
    async () => {
      if (exited()) throw new Error(`the agent exited (${exited()}):\n${output().slice(-2000)}`);
      const node = await h.api.get(NODES, h.nodeName);
      return node.status?.daemonEndpoints?.kubeletEndpoint?.Port || undefined;
    },
    { timeoutMs: 60_000, intervalMs: 200, detail: () => output().slice(-2000) },
  );
  const target: RawTarget = { host: '127.0.0.1', port, tls: {} };
  const token = h.cp.adminToken;
  const healthy = await rawExchange(target, req('GET /healthz HTTP/1.1', [`Authorization: Bearer ${token}`]));
  assert.deepEqual([healthy.status, healthy.body], [200, 'ok']);

  const cases = [
    ...commonCorpus({
      token,
      readPath: '/pods',
      badlyEncoded: ['/containerLogs/%zz/p/c', '/containerLogs/default/%/c', '/containerLogs/default/p/%E0%A4%A'],
      execPath: '/exec/default/nopod/c?command=sh&stdout=true',
      statusOnOrdinaryErrors: false,
    }),
    ...agentCorpus(token),
  ];
  const failures = await runCorpus(target, cases);
  assert.equal(exited(), undefined, `nodelet agent exited (${String(exited())}):\n${output().slice(-3000)}`);
  assert.deepEqual(failures, [], failures.join('\n'));
  assert.doesNotMatch(output(), /Unhandled rejection|Uncaught exception/);
  const pods = await rawExchange(target, req('GET /pods HTTP/1.1', [`Authorization: Bearer ${token}`]));
  assert.equal(pods.status, 200, pods.body);
  assert.equal(JSON.parse(pods.body).kind, 'PodList');
});
