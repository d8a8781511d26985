// The API machinery over plain HTTP on port 0 with a real SQLite store in a temp dir.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, TEST_ADMIN_TOKEN as TOKEN, type TestApiServer, type TestReply } from './testing/test-server.js';


describe('API server machinery', () => {
  let srv: TestApiServer;
  const call = (method: string, path: string, body?: unknown, contentType?: string): Promise<TestReply> => srv.call(method, path, body, { contentType });
  /** Reads watch events until `n` arrived or the stream ended. */
  async function watchEvents(path: string, n: number, during?: () => Promise<void>): Promise<Array<{ type: string; object: any }>> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const ac = new AbortController();
    const r = await fetch(srv.url + path, { headers: { Authorization: `Bearer ${TOKEN}` }, signal: ac.signal });
    assert.equal(r.status, 200);
    const reader = r.body!.getReader();
    const events: Array<{ type: string; object: any }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any
    let buf = '';
    const pending = during?.();
    try {
      while (events.length < n) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += Buffer.from(value).toString();
        let i: number;
        while ((i = buf.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buf.slice(0, i)));
          buf = buf.slice(i + 1);
        }
      }
    } finally {
      await pending;
      ac.abort();
    }
    return events;
  }
  const pod = (name: string, extra: Record<string, unknown> = {}) => ({ metadata: { name, ...((extra.metadata as object) ?? {}) }, spec: { containers: [{ name: 'c', image: 'busybox:latest' }], ...((extra.spec as object) ?? {}) } });

  before(async () => {
    srv = await startTestApiServer({
      bookmarkIntervalMs: 200,
    });
  });
  after(() => srv?.close());

  it('creates pods with Kubernetes defaults and an initial status', async () => {
    const r = await call('POST', '/api/v1/namespaces/default/pods', pod('d1', { spec: { containers: [{ name: 'c', image: 'busybox:latest', ports: [{ containerPort: 80 }] }] } }));
    assert.equal(r.status, 201);
    const { spec, status, metadata } = r.json;
    assert.equal(r.json.kind, 'Pod');
    assert.equal(r.json.apiVersion, 'v1');
    assert.deepEqual(
      [spec.restartPolicy, spec.dnsPolicy, spec.terminationGracePeriodSeconds, spec.schedulerName, spec.serviceAccountName, spec.enableServiceLinks],
      ['Always', 'ClusterFirst', 30, 'default-scheduler', 'default', true],
    );
    assert.deepEqual(spec.securityContext, {});
    const c = spec.containers[0];
    assert.deepEqual([c.imagePullPolicy, c.terminationMessagePath, c.terminationMessagePolicy, c.ports[0].protocol], ['Always', '/dev/termination-log', 'File', 'TCP']);
    assert.deepEqual(status, { phase: 'Pending', qosClass: 'BestEffort' });
    assert.match(metadata.uid, /^[0-9a-f-]{36}$/);
    const gen = await call('POST', '/api/v1/namespaces/default/pods', { metadata: { generateName: 'web-' }, spec: pod('x').spec });
    assert.match(gen.json.metadata.name, /^web-[a-z0-9]{5}$/);
  });

  it('splits status from spec and bumps generation only on spec changes', async () => {
    const dep = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'g' }, spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: pod('x').spec } } };
    const created = (await call('POST', '/apis/apps/v1/namespaces/default/deployments', { ...dep, status: { replicas: 9 } })).json;
    assert.equal(created.metadata.generation, 1);
    assert.deepEqual(created.status, {});
    assert.equal(created.spec.replicas, 1);
    const labeled = (await call('PATCH', '/apis/apps/v1/namespaces/default/deployments/g', { metadata: { labels: { x: 'y' } }, status: { replicas: 5 } }, 'application/merge-patch+json')).json;
    assert.equal(labeled.metadata.generation, 1);
    assert.deepEqual(labeled.status, {});
    const scaled = (await call('PATCH', '/apis/apps/v1/namespaces/default/deployments/g', { spec: { replicas: 2 } }, 'application/merge-patch+json')).json;
    assert.equal(scaled.metadata.generation, 2);
    const st = (await call('PATCH', '/apis/apps/v1/namespaces/default/deployments/g/status', { spec: { replicas: 7 }, status: { observedGeneration: 2, replicas: 2 } }, 'application/merge-patch+json')).json;
    assert.deepEqual([st.spec.replicas, st.status.replicas, st.metadata.generation], [2, 2, 2]);
    const scale = await call('GET', '/apis/apps/v1/namespaces/default/deployments/g/scale');
    assert.deepEqual([scale.json.kind, scale.json.spec.replicas, scale.json.status.selector], ['Scale', 2, 'a=b']);
  });

  it('deletes unscheduled pods at once, marks bound pods, honours finalizers', async () => {
    await call('POST', '/api/v1/namespaces/default/pods', pod('free'));
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/pods/free', {})).status, 200);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/free')).status, 404);
    await call('POST', '/api/v1/namespaces/default/pods', pod('bound', { spec: { nodeName: 'n1', terminationGracePeriodSeconds: 5 } }));
    const marked = (await call('DELETE', '/api/v1/namespaces/default/pods/bound', { propagationPolicy: 'Background' })).json;
    assert.equal(marked.metadata.deletionGracePeriodSeconds, 5);
    assert.ok(marked.metadata.deletionTimestamp);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/bound')).status, 200);
    assert.equal((await call('DELETE', '/api/v1/namespaces/default/pods/bound', { gracePeriodSeconds: 0 })).status, 200);
    assert.equal((await call('GET', '/api/v1/namespaces/default/pods/bound')).status, 404);
    await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'fin', finalizers: ['example.com/keep'] } });
    const kept = (await call('DELETE', '/api/v1/namespaces/default/configmaps/fin')).json;
    assert.ok(kept.metadata.deletionTimestamp);
    assert.equal((await call('GET', '/api/v1/namespaces/default/configmaps/fin')).status, 200);
    await call('PATCH', '/api/v1/namespaces/default/configmaps/fin', { metadata: { finalizers: null } }, 'application/merge-patch+json');
    assert.equal((await call('GET', '/api/v1/namespaces/default/configmaps/fin')).status, 404);
  });

  it('binds pods once (pods/binding) and rejects a second binding', async () => {
    await call('POST', '/api/v1/namespaces/default/pods', pod('sched'));
    const b = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'sched' }, target: { kind: 'Node', name: 'n1' } };
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods/sched/binding', b)).status, 201);
    const p = (await call('GET', '/api/v1/namespaces/default/pods/sched')).json;
    assert.equal(p.spec.nodeName, 'n1');
    assert.equal(p.status.conditions[0].type, 'PodScheduled');
    assert.equal((await call('POST', '/api/v1/namespaces/default/pods/sched/binding', b)).status, 409);
  });

  it('watch: initial ADDED, selector enter/leave as ADDED/DELETED, bookmarks, timeout', async () => {
    await call('POST', '/api/v1/namespaces/kube-public/pods', pod('w1', { metadata: { labels: { sel: 'yes' } } }));
    const events = await watchEvents('/api/v1/namespaces/kube-public/pods?watch=true&labelSelector=sel%3Dyes&allowWatchBookmarks=true&timeoutSeconds=3', 5, async () => {
      await call('POST', '/api/v1/namespaces/kube-public/pods', pod('w2'));
      await call('PATCH', '/api/v1/namespaces/kube-public/pods/w2', { metadata: { labels: { sel: 'yes' } } }, 'application/merge-patch+json');
      await call('PATCH', '/api/v1/namespaces/kube-public/pods/w1', { metadata: { labels: { sel: 'no' } } }, 'application/merge-patch+json');
      await call('PATCH', '/api/v1/namespaces/kube-public/pods/w2', { metadata: { annotations: { a: 'b' } } }, 'application/merge-patch+json');
    });
    const seen = events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.name}`);
    assert.deepEqual(seen.slice(0, 4), ['ADDED w1', 'ADDED w2', 'DELETED w1', 'MODIFIED w2']);
    const bookmarks = await watchEvents('/api/v1/namespaces/kube-public/pods?watch=true&resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=2&labelSelector=none%3Dnone', 100);
    assert.ok(bookmarks.length >= 1 && bookmarks.every((e) => e.type === 'BOOKMARK'), JSON.stringify(bookmarks));
    assert.ok(Number(bookmarks[0]!.object.metadata.resourceVersion) >= 1);
  });

  it('watch from a compacted resourceVersion ends with a 410 Expired ERROR event', async () => {
    const before = Number((await call('GET', '/api/v1/namespaces/default/configmaps')).json.metadata.resourceVersion);
    await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'c1' } });
    await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'c2' } });
    await srv.store.compact(await srv.store.currentRevision());
    const events = await watchEvents(`/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${before}`, 1);
    assert.equal(events[0]!.type, 'ERROR');
    assert.deepEqual([events[0]!.object.code, events[0]!.object.reason], [410, 'Expired']);
    const list = await call('GET', `/api/v1/namespaces/default/configmaps?resourceVersion=${before}&resourceVersionMatch=Exact`);
    assert.equal(list.status, 410);
    const page = await call('GET', '/api/v1/namespaces/default/configmaps?limit=1');
    assert.ok(page.json.metadata.continue);
    await call('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'c3' } });
    await srv.store.compact(await srv.store.currentRevision());
    const stale = await call('GET', `/api/v1/namespaces/default/configmaps?limit=1&continue=${page.json.metadata.continue}`);
    assert.deepEqual([stale.status, stale.json.reason], [410, 'Expired']);
  });

  it('admission reads namespaces and service accounts from memory, and sees the caller’s own writes at once', async () => {
    assert.equal((await call('POST', '/api/v1/namespaces', { metadata: { name: 'brief' } })).status, 201);
    assert.equal((await call('POST', '/api/v1/namespaces/brief/serviceaccounts', { metadata: { name: 'default' } })).status, 201);
    assert.equal((await call('POST', '/api/v1/namespaces/brief/pods', pod('before'))).status, 201);
    assert.equal((await call('DELETE', '/api/v1/namespaces/brief')).status, 200);
    const refused = await call('POST', '/api/v1/namespaces/brief/pods', pod('after'));
    assert.ok(refused.status === 403 || refused.status === 404, `a pod in a deleted namespace: ${refused.status}`);
    assert.equal((await call('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'fresh' } })).status, 201);
    const withToken = await call('POST', '/api/v1/namespaces/default/pods', pod('fresh-1', { spec: { serviceAccountName: 'fresh' } }));
    assert.equal(withToken.status, 201);
    assert.ok(withToken.json.spec.volumes.some((v: { name: string }) => v.name.startsWith('kube-api-access-')));
    const patched = await call('PATCH', '/api/v1/namespaces/default/serviceaccounts/fresh', { automountServiceAccountToken: false }, 'application/merge-patch+json');
    assert.equal(patched.status, 200);
    const without = await call('POST', '/api/v1/namespaces/default/pods', pod('fresh-2', { spec: { serviceAccountName: 'fresh' } }));
    assert.equal(without.status, 201);
    assert.equal(without.json.spec.volumes, undefined, 'the account no longer automounts: no token volume');
  });

  it('a pod without imagePullSecrets gets its service account\'s; one that names its own keeps them', async () => {
    assert.equal((await call('POST', '/api/v1/namespaces/default/serviceaccounts', { metadata: { name: 'puller' }, imagePullSecrets: [{ name: 'reg-a' }, { name: 'reg-b' }] })).status, 201);
    const inherited = await call('POST', '/api/v1/namespaces/default/pods', pod('puller-1', { spec: { serviceAccountName: 'puller' } }));
    assert.equal(inherited.status, 201);
    assert.deepEqual(inherited.json.spec.imagePullSecrets, [{ name: 'reg-a' }, { name: 'reg-b' }]);
    const own = await call('POST', '/api/v1/namespaces/default/pods', pod('puller-2', { spec: { serviceAccountName: 'puller', imagePullSecrets: [{ name: 'mine' }] } }));
    assert.deepEqual(own.json.spec.imagePullSecrets, [{ name: 'mine' }]);
  });

  it('serves discovery: aggregated v2 with the exact content type, legacy lists with subresources', async () => {
    const r = await fetch(`${srv.url}/apis`, { headers: { Authorization: `Bearer ${TOKEN}`, Accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json' } });
    assert.equal(r.headers.get('content-type'), 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    const doc = (await r.json()) as { items: Array<{ metadata: { name: string } }> };
    assert.deepEqual(doc.items.map((i) => i.metadata.name), ['coordination.k8s.io', 'apps', 'batch', 'storage.k8s.io', 'policy', 'node.k8s.io', 'scheduling.k8s.io', 'events.k8s.io', 'networking.k8s.io', 'autoscaling', 'authorization.k8s.io', 'authentication.k8s.io', 'rbac.authorization.k8s.io', 'certificates.k8s.io', 'nodelet.io', 'apiextensions.k8s.io', 'discovery.k8s.io', 'admissionregistration.k8s.io']);
    const legacy = (await call('GET', '/api/v1')).json;
    const names = legacy.resources.map((x: { name: string }) => x.name);
    for (const n of ['pods', 'pods/eviction', 'pods/log', 'pods/exec', 'nodes/status', 'namespaces']) assert.ok(names.includes(n), n);
    const review = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: TOKEN } });
    assert.deepEqual([review.status, review.json.status.authenticated, review.json.status.user.username], [201, true, 'admin']);
    const bad = await call('POST', '/apis/authentication.k8s.io/v1/tokenreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'nope' } });
    assert.equal(bad.json.status.authenticated, false);
    const version = (await call('GET', '/version')).json;
    assert.deepEqual([version.major, version.minor], ['1', '32']);
    const openapi = (await call('GET', '/openapi/v3')).json;
    assert.ok(openapi.paths['apis/apps/v1'].serverRelativeURL.startsWith('/openapi/v3/apis/apps/v1?hash='));
  });
});
