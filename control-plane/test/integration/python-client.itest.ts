// The official Python client (Debian's python3-kubernetes, with python3-pytest; both from
// `make deps`) against a real API server. It spells booleans `True`/`False` (`?watch=True`),
// which the server must read as upstream's parameter codec does, so its Watch gets a stream of
// events, not a list; a dry-run delete (`dryRun=All`) leaves the object in place. The pytest file
// beside this one drives utils.create_from_yaml (several documents, a kind: List) and every kind
// of patch the client sends. Exec, port-forward and namespace deletion need a node and the
// controllers: test/e2e/python-client-lab.itest.ts.
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN, type TestApiServer } from '../../src/apiserver/testing/test-server.js';
import { PYTHON, pythonClientUnavailableReason, runPytest } from '@nodelet/base/testing';

// Watches config maps from the list's resourceVersion, creates one, and prints the first event;
// then deletes it with dryRun=All and prints whether it is still there.
const SCRIPT = `
import sys
from kubernetes import client, watch
cfg = client.Configuration()
cfg.host = sys.argv[1]
cfg.api_key = {'authorization': 'Bearer ' + sys.argv[2]}
api = client.CoreV1Api(client.ApiClient(cfg))
rv = api.list_namespaced_config_map('default').metadata.resource_version
api.create_namespaced_config_map('default', client.V1ConfigMap(metadata=client.V1ObjectMeta(name='from-python'), data={'a': '1'}))
w = watch.Watch()
for ev in w.stream(api.list_namespaced_config_map, 'default', resource_version=rv, timeout_seconds=20):
    print(ev['type'], ev['object'].metadata.name, flush=True)
    w.stop()
api.delete_namespaced_config_map('from-python', 'default', dry_run='All')
print('kept', api.read_namespaced_config_map('from-python', 'default').data['a'], flush=True)
`;

describe('the official Python client', { skip: pythonClientUnavailableReason() }, () => {
  let srv: TestApiServer;

  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  it('watches with ?watch=True and gets an ADDED event; a dryRun=All delete keeps the object', async () => {
    // Async spawn: the server answers from this process's event loop while the script runs.
    const child = spawn(PYTHON, ['-c', SCRIPT, srv.url, TOKEN], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, err);
    assert.deepEqual(out.trim().split('\n'), ['ADDED from-python', 'kept 1']);
  });

  it('pytest: create_from_yaml of several documents and of a List, strategic/JSON/merge patches, status patch', async () => {
    const r = await runPytest(fileURLToPath(new URL('./python/test_objects.py', import.meta.url)), { NODELET_API_URL: srv.url, NODELET_API_TOKEN: TOKEN });
    assert.equal(r.code, 0, r.output);
    assert.match(r.output, /\b12 passed\b/, r.output); // none skipped or left uncollected
  });
});
