// The real kubectl (server reports minor 32 → the dispatcher runs kubectl 1.32) against an
// in-process nodelet server over HTTPS with the admin token. Each test has a fresh --cache-dir.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import YAML from 'yaml';
import { kubectlUnavailableReason, startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';
import { pollUntil } from '@nodelet/base';

const skip = kubectlUnavailableReason();

const NODE = {
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'node-1', labels: { 'node-role.kubernetes.io/worker': '' } },
  status: {
    conditions: [{ type: 'Ready', status: 'True' }],
    addresses: [{ type: 'InternalIP', address: '10.0.0.5' }],
    nodeInfo: { kubeletVersion: 'v1.32.0-nodelet', osImage: 'Debian GNU/Linux 12 (bookworm)', kernelVersion: '6.1.0-test', containerRuntimeVersion: 'containerd://1.6.20' },
  },
};

describe('kubectl against nodelet server', { skip }, () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
    const r = await env.api('POST', '/api/v1/nodes', { body: JSON.stringify(NODE), contentType: 'application/json' });
    assert.equal(r.status, 201, r.body);
  });
  after(() => env?.close());

  it('version and api-resources', async () => {
    const k = await env.newKubectl();
    const v = await k(['version']);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /Server Version: v1\.32\.0-nodelet/);
    const r = await k(['api-resources']);
    assert.equal(r.code, 0, r.stderr);
    for (const re of [/^pods\s+po\s+v1\s+true\s+Pod$/m, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m, /^leases\s+coordination\.k8s\.io\/v1/m, /^nodes\s+no\s+v1\s+false/m, /^events\s+ev/m]) {
      assert.match(r.stdout, re);
    }
  });

  it('create deployment/namespace/configmap (protobuf bodies) store what kubectl sent', async () => {
    const k = await env.newKubectl();
    const d = await k(['create', 'deployment', 'web', '--image=busybox:1.36', '--port=80', '--replicas=2', '-v=8']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stderr, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
    const dep = JSON.parse((await k(['get', 'deploy', 'web', '-o', 'json'])).stdout);
    assert.equal(dep.spec.replicas, 2);
    assert.equal(dep.metadata.generation, 1);
    assert.deepEqual(dep.spec.selector, { matchLabels: { app: 'web' } });
    assert.deepEqual(dep.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.equal(dep.spec.template.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(dep.spec.strategy.type, 'RollingUpdate');
    assert.equal((await k(['create', 'namespace', 'team-a'])).code, 0);
    assert.equal((await k(['create', 'configmap', 'cfg', '-n', 'team-a', '--from-literal=a=b'])).code, 0);
    const cm = JSON.parse((await k(['get', 'cm', 'cfg', '-n', 'team-a', '-o', 'json'])).stdout);
    assert.deepEqual(cm.data, { a: 'b' });
    assert.equal((await k(['create', 'secret', 'generic', 'pw', '-n', 'team-a', '--from-literal=pw=s3cret'])).code, 0);
    const secret = JSON.parse((await k(['get', 'secret', 'pw', '-n', 'team-a', '-o', 'json'])).stdout);
    assert.deepEqual([secret.type, Buffer.from(secret.data.pw, 'base64').toString()], ['Opaque', 's3cret']);
    assert.equal((await k(['create', 'service', 'nodeport', 'np', '-n', 'team-a', '--tcp=80:8080'])).code, 0);
    const svc = JSON.parse((await k(['get', 'svc', 'np', '-n', 'team-a', '-o', 'json'])).stdout);
    assert.equal(svc.spec.type, 'NodePort');
    assert.match(svc.spec.clusterIP, /^10\.96\.\d+\.\d+$/);
    assert.deepEqual([svc.spec.ports[0].port, svc.spec.ports[0].targetPort, svc.spec.ports[0].protocol], [80, 8080, 'TCP']);
    assert.ok(svc.spec.ports[0].nodePort >= 30000 && svc.spec.ports[0].nodePort <= 32767);
    const dup = await k(['create', 'namespace', 'team-a']);
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /Error from server \(AlreadyExists\): namespaces "team-a" already exists/);
  });

  it('get: Tables, -o wide, --show-labels, -o yaml, -A', async () => {
    const k = await env.newKubectl();
    for (const n of ['t1', 't2']) assert.equal((await k(['run', n, '--image=busybox:1.36', '--labels=tier=t'])).code, 0);
    const all = await k(['get', 'pods', '-A']);
    assert.match(all.stdout, /^NAMESPACE\s+NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
    assert.match(all.stdout, /^default\s+t1\s+0\/1\s+Pending\s+0\s+\d+s$/m);
    const wide = await k(['get', 'nodes', '-o', 'wide']);
    assert.match(wide.stdout, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+INTERNAL-IP\s+EXTERNAL-IP\s+OS-IMAGE\s+KERNEL-VERSION\s+CONTAINER-RUNTIME$/m);
    assert.match(wide.stdout, /^node-1\s+Ready\s+worker\s+\S+\s+v1\.32\.0-nodelet\s+10\.0\.0\.5\s+<none>\s+Debian GNU\/Linux 12 \(bookworm\)\s+6\.1\.0-test\s+containerd:\/\/1\.6\.20$/m);
    const podsWide = await k(['get', 'pods', '-o', 'wide', '--show-labels', '-l', 'tier=t']);
    assert.match(podsWide.stdout, /IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES\s+LABELS/);
    assert.match(podsWide.stdout, /^t2\s.*<none>\s+tier=t$/m);
    const yaml = YAML.parse((await k(['get', 'pod', 't1', '-o', 'yaml'])).stdout);
    assert.equal(yaml.kind, 'Pod');
    assert.equal(yaml.spec.restartPolicy, 'Always');
    assert.equal(yaml.spec.serviceAccountName, 'default');
    assert.equal(yaml.spec.terminationGracePeriodSeconds, 30);
    const replaced = await k(['replace', '-f', '-'], { stdin: YAML.stringify(yaml) });
    assert.equal(replaced.code, 0, replaced.stderr);
  });

  it('--chunk-size pages at one resourceVersion and lists each pod once', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['create', 'namespace', 'paged'])).code, 0);
    for (let i = 0; i < 5; i++) assert.equal((await k(['run', `p${i}`, '-n', 'paged', '--image=busybox:1.36'])).code, 0);
    const r = await k(['get', 'pods', '-n', 'paged', '--chunk-size=2', '-o', 'name', '-v=6']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split('\n'), ['pod/p0', 'pod/p1', 'pod/p2', 'pod/p3', 'pod/p4']);
    assert.equal((r.stderr.match(/GET https:\/\/[^ ]+\/pods\?/g) ?? []).length, 3);
    const tokens = [...r.stderr.matchAll(/continue=([A-Za-z0-9_-]+)/g)].map((m) => JSON.parse(Buffer.from(m[1]!, 'base64url').toString()).rv);
    assert.equal(tokens.length, 2);
    assert.equal(tokens[0], tokens[1]);
  });

  it('apply: created → unchanged → configured, then --server-side', async () => {
    const k = await env.newKubectl();
    const file = join(env.dir, 'app.yaml');
    const manifest = (replicas: number): string =>
      YAML.stringify({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'app', labels: { app: 'app' } },
        spec: { replicas, selector: { matchLabels: { app: 'app' } }, template: { metadata: { labels: { app: 'app' } }, spec: { containers: [{ name: 'main', image: 'busybox:1.36', ports: [{ containerPort: 8080 }] }] } } },
      });
    await writeFile(file, manifest(1));
    assert.match((await k(['apply', '-f', file])).stdout, /deployment.apps\/app created/);
    assert.match((await k(['apply', '-f', file])).stdout, /deployment.apps\/app unchanged/);
    await writeFile(file, manifest(3));
    assert.match((await k(['apply', '-f', file])).stdout, /deployment.apps\/app configured/);
    const dep = JSON.parse((await k(['get', 'deploy', 'app', '-o', 'json'])).stdout);
    assert.equal(dep.spec.replicas, 3);
    assert.equal(dep.metadata.generation, 2);
    await writeFile(file, manifest(4));
    const ssa = await k(['apply', '--server-side', '-f', file]);
    assert.match(ssa.stdout, /deployment.apps\/app serverside-applied/, ssa.stderr);
    const after = JSON.parse((await k(['get', 'deploy', 'app', '-o', 'json', '--show-managed-fields'])).stdout);
    assert.equal(after.spec.replicas, 4);
    assert.ok(after.metadata.managedFields.some((m: { manager: string; operation: string }) => m.manager === 'kubectl' && m.operation === 'Apply'));
  });

  it('label, annotate, scale via /scale, set image keeps ports', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['create', 'deployment', 'edit', '--image=busybox:1.36', '--port=80'])).code, 0);
    assert.equal((await k(['label', 'deploy', 'edit', 'tier=web'])).code, 0);
    assert.equal((await k(['annotate', 'deploy', 'edit', 'note=hello'])).code, 0);
    const scale = await k(['scale', 'deploy', 'edit', '--replicas=5', '-v=6']);
    assert.equal(scale.code, 0, scale.stderr);
    assert.match(scale.stderr, /PATCH https:\/\/[^ ]+\/deployments\/edit\/scale/);
    assert.equal((await k(['set', 'image', 'deploy/edit', 'busybox=busybox:1.37'])).code, 0);
    const dep = JSON.parse((await k(['get', 'deploy', 'edit', '-o', 'json'])).stdout);
    assert.equal(dep.metadata.labels.tier, 'web');
    assert.equal(dep.metadata.annotations.note, 'hello');
    assert.equal(dep.spec.replicas, 5);
    assert.equal(dep.spec.template.spec.containers[0].image, 'busybox:1.37');
    assert.deepEqual(dep.spec.template.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.equal(dep.metadata.generation, 3);
  });

  it('cordon, uncordon, taint', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['cordon', 'node-1'])).code, 0);
    assert.match((await k(['get', 'nodes'])).stdout, /^node-1\s+Ready,SchedulingDisabled\s/m);
    assert.equal((await k(['uncordon', 'node-1'])).code, 0);
    assert.match((await k(['get', 'nodes'])).stdout, /^node-1\s+Ready\s+worker/m);
    assert.equal((await k(['taint', 'nodes', 'node-1', 'dedicated=lab:NoSchedule'])).code, 0);
    const node = JSON.parse((await k(['get', 'node', 'node-1', '-o', 'json'])).stdout);
    assert.deepEqual(node.spec.taints, [{ key: 'dedicated', value: 'lab', effect: 'NoSchedule' }]);
    assert.equal((await k(['taint', 'nodes', 'node-1', 'dedicated=lab:NoSchedule-'])).code, 0);
    assert.equal(JSON.parse((await k(['get', 'node', 'node-1', '-o', 'json'])).stdout).spec.taints, undefined);
  });

  it('replace with a stale resourceVersion is a Conflict', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['create', 'configmap', 'stale', '--from-literal=v=1'])).code, 0);
    const old = (await k(['get', 'cm', 'stale', '-o', 'yaml'])).stdout;
    assert.equal((await k(['label', 'cm', 'stale', 'bump=1'])).code, 0);
    const r = await k(['replace', '-f', '-'], { stdin: old });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Error from server \(Conflict\).*Operation cannot be fulfilled on configmaps "stale": the object has been modified/);
  });

  it('get -w shows rows for changes made elsewhere', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['create', 'namespace', 'watched'])).code, 0);
    const w = k.spawn(['get', 'pods', '-n', 'watched', '-w', '-v=6']);
    try {
      // kubectl lists first, then watches from the list's resourceVersion (-v=6 logs the 200).
      await pollUntil('the watch to be established', () => /watch=true[^\n]* 200 OK/.test(w.errors()), { timeoutMs: 10_000, intervalMs: 25 });
      assert.equal((await k(['run', 'wp', '-n', 'watched', '--image=busybox:1.36'])).code, 0);
      await pollUntil('ADDED row', () => /^wp\s+0\/1\s+Pending/m.test(w.output()), { timeoutMs: 5000, intervalMs: 25 });
      assert.equal((await k(['label', 'pod', 'wp', '-n', 'watched', 'seen=yes'])).code, 0);
      await pollUntil('MODIFIED row', () => (w.output().match(/^wp\s/gm) ?? []).length >= 2, { timeoutMs: 5000, intervalMs: 25 });
      assert.equal((await k(['delete', 'pod', 'wp', '-n', 'watched'])).code, 0);
      await pollUntil('DELETED row', () => (w.output().match(/^wp\s/gm) ?? []).length >= 3, { timeoutMs: 5000, intervalMs: 25 });
    } finally {
      w.kill();
    }
  });

  it('delete of a bound pod waits for the agent-side final delete', async (t) => {
    const k = await env.newKubectl();
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'bound' }, spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'busybox:1.36' }] } };
    assert.equal((await env.api('POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(pod), contentType: 'application/json' })).status, 201);
    // -v=6 logs each request kubectl makes: its wait is a watch of the pod by name, opened after
    // the DELETE answered. Once that watch is open, kubectl has had the DELETE's reply and is
    // waiting: the observable point at which "not finished" means something.
    const del = k.spawn(['delete', 'pod', 'bound', '-v=6']);
    t.after(() => del.kill());
    let finished = false;
    void del.done.then(() => (finished = true));
    const marked = await pollUntil('deletionTimestamp', async () => {
      const r = await env.api('GET', '/api/v1/namespaces/default/pods/bound');
      return r.status === 200 && r.json().metadata.deletionTimestamp ? r.json() : undefined;
    }, { timeoutMs: 10_000, intervalMs: 25 });
    assert.equal(marked.metadata.deletionGracePeriodSeconds, 30);
    const waitWatch = /GET \S+\/pods\?\S*fieldSelector=metadata\.name%3Dbound\S*watch=true/;
    await pollUntil('kubectl watching the pod', () => waitWatch.test(del.errors()) || finished, { timeoutMs: 10_000, intervalMs: 25 }).catch((err: unknown) => {
      throw new Error(`${String(err)}\nkubectl's log:\n${del.errors()}`);
    });
    assert.equal(finished, false, `kubectl delete returned before the pod was gone:\n${del.errors()}`);
    // Act as the node agent: the final delete with grace 0.
    const fin = await env.api('DELETE', '/api/v1/namespaces/default/pods/bound', { body: JSON.stringify({ gracePeriodSeconds: 0 }), contentType: 'application/json' });
    assert.equal(fin.status, 200, fin.body);
    const r = await del.done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pod "bound" deleted/);
    assert.equal((await env.api('GET', '/api/v1/namespaces/default/pods/bound')).status, 404);
  });

  it('describe pod and node show events selected by involvedObject', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['run', 'described', '--image=busybox:1.36'])).code, 0);
    const pod = JSON.parse((await k(['get', 'pod', 'described', '-o', 'json'])).stdout);
    const event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'described.1', namespace: 'default' },
      involvedObject: { kind: 'Pod', namespace: 'default', name: 'described', uid: pod.metadata.uid, apiVersion: 'v1' },
      reason: 'Scheduled',
      message: 'Successfully assigned default/described to node-1',
      type: 'Normal',
      source: { component: 'default-scheduler' },
      firstTimestamp: new Date().toISOString(),
      lastTimestamp: new Date().toISOString(),
      count: 1,
    };
    assert.equal((await env.api('POST', '/api/v1/namespaces/default/events', { body: JSON.stringify(event), contentType: 'application/json' })).status, 201);
    const d = await k(['describe', 'pod', 'described']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /^Name:\s+described$/m);
    assert.match(d.stdout, /Normal\s+Scheduled\s+\S+\s+default-scheduler\s+Successfully assigned default\/described to node-1/);
    const n = await k(['describe', 'node', 'node-1']);
    assert.equal(n.code, 0, n.stderr);
    assert.match(n.stdout, /Container Runtime Version:\s+containerd:\/\/1\.6\.20/);
  });

  it('wait --for=condition=Ready, also with the streaming list (WatchListClient)', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['run', 'waiter', '--image=busybox:1.36'])).code, 0);
    for (const featureEnv of [{}, { KUBE_FEATURE_WatchListClient: 'true' }] as Array<Record<string, string>>) {
      // -v=6 logs each response as its headers arrive: the watch's line means kubectl is watching
      // (it saw the pod not Ready), so the condition it reports comes from the patch below.
      const w = k.spawn(['wait', '-v=6', '--for=condition=Ready', 'pod/waiter', '--timeout=20s'], { env: featureEnv });
      await pollUntil('kubectl wait to be watching', async () => /GET \S+\/pods\?\S*watch=true\S* 200 OK/.test(w.errors()), { timeoutMs: 20_000, intervalMs: 25 });
      const ready = JSON.stringify({ status: { conditions: [{ type: 'Ready', status: 'True' }] } });
      const p = await env.api('PATCH', '/api/v1/namespaces/default/pods/waiter/status', { body: ready, contentType: 'application/merge-patch+json' });
      assert.equal(p.status, 200, p.body);
      const r = await w.done;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /pod\/waiter condition met/);
      await env.api('PATCH', '/api/v1/namespaces/default/pods/waiter/status', { body: JSON.stringify({ status: { conditions: null } }), contentType: 'application/merge-patch+json' });
    }
  });

  it('drain cordons, evicts bound pods through pods/eviction and waits for them to go', async (t) => {
    const k = await env.newKubectl();
    const node = { ...NODE, metadata: { name: 'node-2' } };
    assert.equal((await env.api('POST', '/api/v1/nodes', { body: JSON.stringify(node), contentType: 'application/json' })).status, 201);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'evictee' }, spec: { nodeName: 'node-2', containers: [{ name: 'c', image: 'busybox:1.36' }] } };
    assert.equal((await env.api('POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(pod), contentType: 'application/json' })).status, 201);
    const drain = k.spawn(['drain', 'node-2', '--ignore-daemonsets', '--force', '--timeout=30s', '-v=6']);
    t.after(() => drain.kill());
    await pollUntil('the eviction', async () => (await env.api('GET', '/api/v1/namespaces/default/pods/evictee')).json().metadata.deletionTimestamp, { timeoutMs: 10_000, intervalMs: 25 });
    assert.equal((await env.api('DELETE', '/api/v1/namespaces/default/pods/evictee', { body: '{"gracePeriodSeconds":0}', contentType: 'application/json' })).status, 200);
    const r = await drain.done;
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /node\/node-2 drained/);
    assert.match(r.stderr, /POST https:\/\/[^ ]+\/pods\/evictee\/eviction 201/);
    assert.equal((await env.api('GET', '/api/v1/nodes/node-2')).json().spec.unschedulable, true);
  });
});
