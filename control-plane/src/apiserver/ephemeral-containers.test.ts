// pods/ephemeralcontainers through the real API server (HTTP on port 0, SQLite in a temp dir):
// GET/PUT/PATCH change only spec.ephemeralContainers; entries are added, never removed or
// changed; the ephemeral-only field rules and the target container check are upstream's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

const NS = '/api/v1/namespaces/default/pods';
const SMP = 'application/strategic-merge-patch+json';

describe('pods/ephemeralcontainers', () => {
  let srv: TestApiServer;
  before(async () => {
    srv = await startTestApiServer();
  });
  after(async () => {
    await srv?.close();
  });

  async function createPod(name: string): Promise<void> {
    const r = await srv.call('POST', NS, { metadata: { name, labels: { a: '1' } }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }], initContainers: [{ name: 'init', image: 'busybox:1.36' }] } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
  }
  const debugC = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: 'busybox:1.36', targetContainerName: 'app', ...extra });
  const causes = (r: { json: { details?: { causes?: Array<{ reason: string; field: string; message: string }> } } }): string[] =>
    (r.json.details?.causes ?? []).map((c) => `${c.reason} ${c.field}: ${c.message}`);

  it('discovery lists the subresource with get, patch, update', async () => {
    const r = await srv.call('GET', '/api/v1');
    const sub = (r.json.resources as Array<{ name: string; verbs: string[]; kind: string }>).find((x) => x.name === 'pods/ephemeralcontainers');
    assert.ok(sub, 'pods/ephemeralcontainers in /api/v1');
    assert.deepEqual([...sub.verbs].sort(), ['get', 'patch', 'update']);
    assert.equal(sub.kind, 'Pod');
  });

  it('a strategic merge patch adds a container and changes nothing else', async () => {
    await createPod('p1');
    const r = await srv.call('PATCH', `${NS}/p1/ephemeralcontainers`, {
      metadata: { labels: { a: '2' } },
      spec: { ephemeralContainers: [debugC('debugger')], activeDeadlineSeconds: 5 },
      status: { phase: 'Running' },
    }, { contentType: SMP });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.spec.ephemeralContainers.map((c: { name: string }) => c.name), ['debugger']);
    assert.equal(r.json.metadata.labels.a, '1', 'labels are not written through the subresource');
    assert.equal(r.json.spec.activeDeadlineSeconds, undefined);
    assert.equal(r.json.status.phase, 'Pending');
    const got = await srv.call('GET', `${NS}/p1/ephemeralcontainers`);
    assert.equal(got.status, 200);
    assert.equal(got.json.kind, 'Pod');
    assert.equal(got.json.spec.ephemeralContainers[0].targetContainerName, 'app');
    // A second one is appended (PUT of the whole pod as kubectl's older clients do).
    got.json.spec.ephemeralContainers.push(debugC('second', { targetContainerName: undefined }));
    const put = await srv.call('PUT', `${NS}/p1/ephemeralcontainers`, got.json);
    assert.equal(put.status, 200, JSON.stringify(put.json));
    assert.deepEqual(put.json.spec.ephemeralContainers.map((c: { name: string }) => c.name), ['debugger', 'second']);
  });

  it('an existing ephemeral container may not be removed or changed', async () => {
    await createPod('p2');
    assert.equal((await srv.call('PATCH', `${NS}/p2/ephemeralcontainers`, { spec: { ephemeralContainers: [debugC('d1')] } }, { contentType: SMP })).status, 200);
    const pod = (await srv.call('GET', `${NS}/p2/ephemeralcontainers`)).json;
    const removed = await srv.call('PUT', `${NS}/p2/ephemeralcontainers`, { ...pod, spec: { ...pod.spec, ephemeralContainers: [] } });
    assert.equal(removed.status, 422);
    assert.deepEqual(causes(removed), ['FieldValueForbidden spec.ephemeralContainers: Forbidden: existing ephemeral containers "d1" may not be removed']);
    const changed = await srv.call('PUT', `${NS}/p2/ephemeralcontainers`, { ...pod, spec: { ...pod.spec, ephemeralContainers: [{ ...pod.spec.ephemeralContainers[0], image: 'busybox:1.37' }] } });
    assert.equal(changed.status, 422);
    assert.deepEqual(causes(changed), ['FieldValueForbidden spec.ephemeralContainers[0]: Forbidden: existing ephemeral containers "d1" may not be changed']);
  });

  it('ports, probes, resources and lifecycle are forbidden; names are unique; the target must exist', async () => {
    await createPod('p3');
    const r = await srv.call('PATCH', `${NS}/p3/ephemeralcontainers`, {
      spec: {
        ephemeralContainers: [
          debugC('d1', { ports: [{ containerPort: 80 }], readinessProbe: { exec: { command: ['true'] } }, resources: { limits: { cpu: '1' } }, lifecycle: { postStart: { exec: { command: ['true'] } } } }),
          debugC('app'),
          debugC('d3', { targetContainerName: 'nope' }),
        ],
      },
    }, { contentType: SMP });
    assert.equal(r.status, 422, JSON.stringify(r.json));
    assert.deepEqual(causes(r).sort(), [
      'FieldValueDuplicate spec.ephemeralContainers[1].name: Duplicate value: "app"',
      'FieldValueForbidden spec.ephemeralContainers[0].lifecycle: Forbidden: cannot be set for an Ephemeral Container',
      'FieldValueForbidden spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container',
      'FieldValueForbidden spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container',
      'FieldValueForbidden spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container',
      'FieldValueNotFound spec.ephemeralContainers[2].targetContainerName: Not found: "nope"',
    ]);
    // The init container is a valid target too; an empty resources (kubectl sends `resources: {}`) is no value.
    const ok = await srv.call('PATCH', `${NS}/p3/ephemeralcontainers`, { spec: { ephemeralContainers: [debugC('d4', { targetContainerName: 'init', resources: {}, ports: [] })] } }, { contentType: SMP });
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
  });

  it('neither a pod create nor a pod update may set ephemeral containers; POST to the subresource is 405', async () => {
    const created = await srv.call('POST', NS, { metadata: { name: 'p4' }, spec: { containers: [{ name: 'app', image: 'busybox:1.36' }], ephemeralContainers: [debugC('d')] } });
    assert.equal(created.status, 422);
    assert.ok(causes(created).includes('FieldValueForbidden spec.ephemeralContainers: Forbidden: cannot be set on create'), causes(created).join('\n'));
    await createPod('p5');
    const updated = await srv.call('PATCH', `${NS}/p5`, { spec: { ephemeralContainers: [debugC('d')] } }, { contentType: SMP });
    assert.equal(updated.status, 422);
    assert.match(causes(updated).join('\n'), /FieldValueForbidden spec: Forbidden: pod updates may not change fields other than/);
    assert.equal((await srv.call('POST', `${NS}/p5/ephemeralcontainers`, {})).status, 405);
    assert.equal((await srv.call('GET', `${NS}/missing/ephemeralcontainers`)).status, 404);
  });
});
