// The official Python client (Debian's python3-kubernetes, `make deps`) against a real API server:
// it spells booleans `True`/`False` (`?watch=True`), which the server must read as upstream's
// parameter codec does, so its Watch gets a stream of events, not a list. Also a dry-run delete
// through it (`dryRun=All`) that leaves the object in place.
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN, type TestApiServer } from '../../src/apiserver/testing/test-server.js';

// Debian's interpreter, where python3-kubernetes lives (a `python3` earlier on PATH may be another).
const PYTHON = '/usr/bin/python3';
const hasClient = spawnSync(PYTHON, ['-c', 'import kubernetes'], { stdio: 'ignore' }).status === 0;

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

describe('the official Python client', { skip: hasClient ? false : 'python3-kubernetes is not installed (make deps)' }, () => {
  let srv: TestApiServer;

  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  it('watches with ?watch=True and gets an ADDED event; a dryRun=All delete keeps the object', async () => {
    // Async spawn: the server answers from this process's event loop while the script runs.
    const { spawn } = await import('node:child_process');
    const child = spawn(PYTHON, ['-c', SCRIPT, srv.url, TOKEN], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, err);
    assert.deepEqual(out.trim().split('\n'), ['ADDED from-python', 'kept 1']);
  });
});
