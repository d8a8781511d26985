// The real kubectl (client-go) as the upstream reader of the server's protobuf watch stream.
// `kubectl run -i --rm` waits for its pod with a client-go informer on the typed clientset, which
// asks for `application/vnd.kubernetes.protobuf,application/json`; its reflector logs
// "watch of *v1.Pod ended with: … got invalid watch event type" and lists again when a frame is
// not a bare WatchEvent (issue 29). No node runs here: the test moves the pod to Succeeded itself,
// and kubectl must learn it through the watch (one list, no relist), then deletes the pod (--rm).
// The second case turns on client-go's WatchListClient, so the informer starts with
// sendInitialEvents and needs the initial-events-end BOOKMARK in protobuf too.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { pollUntil } from '@nodelet/base';
import { KUBECTL, kubectlUnavailableReason, startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';

interface Started {
  done: Promise<{ code: number; stderr: string }>;
  stderr: () => string;
}

/** `kubectl run <name> -i --rm` at -v=8 (request URLs, Accept and the reply's headers in stderr). */
function kubectlRun(env: KubectlEnv, name: string, extraEnv: Record<string, string>): Started {
  let err = '';
  const child = execFile(
    KUBECTL,
    ['--kubeconfig', env.cp.kubeconfigPath, '--cache-dir', join(env.dir, `cache-${name}`), '-v=8', 'run', name, '-i', '--rm', '--restart=Never', '--image=busybox:1.36', '--pod-running-timeout=90s', '--', 'cat'],
    { env: { ...process.env, ...extraEnv }, timeout: 120_000, maxBuffer: 16 << 20 },
  );
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  child.stdin!.end('hi\n');
  const done = new Promise<{ code: number; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code: code ?? 1, stderr: err })));
  return { done, stderr: () => err };
}

/**
 * The pod `name`'s GETs in client-go's -v=8 log (`GET <url>` lines, each followed later by its
 * request and response headers): the lists and the watches.
 */
function podRequests(stderr: string, name: string): { lists: string[]; watches: string[] } {
  const gets = stderr.split('\n').filter((l) => /\] GET https:\/\/\S*\/pods\?/.test(l) && l.includes(`metadata.name%3D${name}`));
  return { lists: gets.filter((l) => !l.includes('watch=true')), watches: gets.filter((l) => l.includes('watch=true')) };
}

/** Whether a reply came with the protobuf watch stream's media type (only a watch reply has it). */
const PROTOBUF_WATCH_REPLY = /Content-Type: application\/vnd\.kubernetes\.protobuf;stream=watch/;

describe('kubectl reads protobuf watches (client-go as the upstream decoder)', { skip: kubectlUnavailableReason() }, () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
  });
  after(async () => {
    await env?.close();
  });

  for (const [title, name, extraEnv] of [
    ['kubectl run -i --rm: the pod informer watches in protobuf, sees the pod finish through the watch, no watch error', 'pw-plain', {}],
    ['the same with client-go\'s WatchListClient: sendInitialEvents and the initial-events-end BOOKMARK in protobuf', 'pw-list', { KUBE_FEATURE_WatchListClient: 'true' }],
  ] as const) {
    it(title, { timeout: 150_000 }, async () => {
      const run = kubectlRun(env, name, extraEnv);
      // The informer's watch is open once its reply's headers are logged (client-go logs them as they arrive).
      await pollUntil(`kubectl's pod watch to be open`, async () => (PROTOBUF_WATCH_REPLY.test(run.stderr()) ? true : undefined), { timeoutMs: 60_000 });
      const patched = await env.api('PATCH', `/api/v1/namespaces/default/pods/${name}/status`, {
        contentType: 'application/merge-patch+json',
        body: JSON.stringify({ status: { phase: 'Succeeded' } }),
      });
      assert.equal(patched.status, 200, patched.body);
      const r = await run.done;
      // Nothing in the stream was refused: no reflector warning, no decode error.
      assert.doesNotMatch(r.stderr, /invalid watch event type|unable to decode an event from the watch stream|watch of \*v1\.Pod ended with/);
      const { lists, watches } = podRequests(r.stderr, name);
      // The watch asked for protobuf and got the protobuf watch stream.
      assert.match(r.stderr, /Accept: application\/vnd\.kubernetes\.protobuf,\s*application\/json/);
      assert.match(r.stderr, PROTOBUF_WATCH_REPLY);
      // The Succeeded phase came through the watch: no relist after the first (watch-list needs none).
      assert.ok(lists.length <= 1, `kubectl listed the pod ${lists.length} times:\n${lists.join('\n')}`);
      assert.equal(watches.length, 1, watches.join('\n'));
      // The informer's list (when there is one) was protobuf too, and client-go read it.
      if (lists.length) assert.match(r.stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf\n/);
      if ('KUBE_FEATURE_WatchListClient' in extraEnv) {
        assert.equal(lists.length, 0, 'watch-list starts with the watch, not a list');
        assert.match(watches[0]!, /sendInitialEvents=true/);
        assert.match(r.stderr, /received the bookmark that marks the end of initial events stream/);
      }
      // --rm: kubectl deleted the pod after it finished (it tried the logs of a pod no node runs).
      await pollUntil(`pod ${name} to be deleted`, async () => ((await env.api('GET', `/api/v1/namespaces/default/pods/${name}`)).status === 404 ? true : undefined), { timeoutMs: 30_000 });
    });
  }
});
