// Volume paths through the real API server (HTTP on port 0, SQLite in a temp dir) with ApiClient:
// what would become a host path on the node is refused with 422 Invalid and upstream's causes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { ApiClient, CONFIGMAPS, PODS, SECRETS, statusOf, type Pod } from '@nodelet/api';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

describe('volume paths at the API server', () => {
  let srv: TestApiServer;
  let api: ApiClient;
  before(async () => {
    srv = await startTestApiServer();
    api = new ApiClient({ server: srv.url, token: srv.token, timeoutMs: 10_000 });
  });
  after(async () => {
    api?.close();
    await srv?.close();
  });

  const pod = (name: string, spec: Partial<NonNullable<Pod['spec']>>): Pod => ({
    metadata: { name, namespace: 'default' },
    spec: { containers: [{ name: 'c', image: 'busybox:1.36' }], ...spec },
  });
  /** The 422's causes as `reason field: message`. */
  async function causes(p: Promise<unknown>): Promise<string[]> {
    const err = await p.then(() => assert.fail('expected 422'), (e: unknown) => e);
    assert.ok(hasCode(err, 'ERR_INVALID_ARGUMENT'), String(err));
    const st = statusOf(err);
    assert.equal(st?.code, 422);
    assert.equal(st?.reason, 'Invalid');
    return (st?.details?.causes ?? []).map((c) => `${c.reason} ${c.field}: ${c.message}`);
  }

  it('a pod with a volume named ../x is 422 Invalid naming spec.volumes[0].name', async () => {
    const got = await causes(api.create(PODS, pod('traversal', { volumes: [{ name: '../x', configMap: { name: 'cm' } }] })));
    assert.equal(got.length, 1, got.join('\n'));
    assert.match(got[0]!, /^FieldValueInvalid spec\.volumes\[0\]\.name: Invalid value: "\.\.\/x": a lowercase RFC 1123 label must consist of/);
    await assert.rejects(api.get(PODS, 'traversal', { namespace: 'default' }), (e) => hasCode(e, 'ERR_NOT_FOUND'));
  });

  it('subPath with .. or an absolute path, and subPath with subPathExpr, are 422', async () => {
    const got = await causes(api.create(PODS, pod('subpath', {
      volumes: [{ name: 'data', emptyDir: {} }],
      containers: [{
        name: 'c',
        image: 'busybox:1.36',
        volumeMounts: [
          { name: 'data', mountPath: '/a', subPath: '../../../' },
          { name: 'data', mountPath: '/b', subPath: '/etc' },
          { name: 'data', mountPath: '/c', subPath: 'x', subPathExpr: '$(HOSTNAME)' },
          { name: 'nope', mountPath: '/d' },
        ],
      }],
    })));
    assert.deepEqual(got, [
      `FieldValueInvalid spec.containers[0].volumeMounts.subPath: Invalid value: "../../../": must not contain '..'`,
      'FieldValueInvalid spec.containers[0].volumeMounts.subPath: Invalid value: "/etc": must be a relative path',
      'FieldValueInvalid spec.containers[0].volumeMounts[2].subPathExpr: Invalid value: "$(HOSTNAME)": subPathExpr and subPath are mutually exclusive',
      'FieldValueNotFound spec.containers[0].volumeMounts[3].name: Not found: "nope"',
    ]);
  });

  it('items paths, modes, and Secret/ConfigMap keys that would leave the volume are 422', async () => {
    const got = await causes(api.create(PODS, pod('items', {
      volumes: [{ name: 's', secret: { secretName: 's', defaultMode: 0o4755, items: [{ key: 'k', path: '../../etc/passwd' }] } }],
    })));
    assert.deepEqual(got, [
      'FieldValueInvalid spec.volumes[0].secret.defaultMode: Invalid value: 2541: must be a number between 0 and 0777 (octal), both inclusive',
      `FieldValueInvalid spec.volumes[0].secret.items[0].path: Invalid value: "../../etc/passwd": must not contain '..'`,
    ]);
    const secret = await causes(api.create(SECRETS, { metadata: { name: 's', namespace: 'default' }, stringData: { '..data': 'x', 'ok.key': 'y' } }));
    assert.deepEqual(secret, [`FieldValueInvalid data[..data]: Invalid value: "..data": must not start with '..'`]);
    const cm = await causes(api.create(CONFIGMAPS, { metadata: { name: 'c', namespace: 'default' }, data: { 'a/b': 'x' } }));
    assert.equal(cm.length, 1);
    assert.match(cm[0]!, /^FieldValueInvalid data\[a\/b\]: Invalid value: "a\/b": a valid config key must consist of/);
  });

  it('a valid pod with every supported volume kind is accepted', async () => {
    const created = await api.create(PODS, pod('fine', {
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'cm', items: [{ key: 'k', path: 'conf/k.yaml', mode: 0o400 }] } },
        { name: 'sec', secret: { secretName: 's', defaultMode: 0o400 } },
        { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
      ],
      containers: [{ name: 'c', image: 'busybox:1.36', volumeMounts: [{ name: 'data', mountPath: '/data', subPath: 'a/b' }, { name: 'cfg', mountPath: '/cfg' }, { name: 'sec', mountPath: '/sec' }, { name: 'host', mountPath: '/host', readOnly: true }] }],
    }));
    assert.equal(created.spec?.volumes?.[1]?.configMap?.defaultMode, 0o644);
  });
});

describe('pod validation on update', () => {
  it('ratchets: a pod stored before a rule existed can still be updated, a new problem is still refused', async () => {
    const { podStrategy } = await import('./strategies/pods.js');
    const legacy = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'old', namespace: 'default' }, spec: { containers: [{ name: 'c', image: 'x' }], volumes: [{ name: '../x', emptyDir: {} }] } };
    assert.deepEqual(podStrategy.validate!({ ...legacy, status: { phase: 'Running' } }, legacy), []);
    const worse = { ...legacy, spec: { ...legacy.spec, containers: [{ name: 'c', image: 'y', volumeMounts: [{ name: 'nope', mountPath: '/n' }] }] } };
    assert.deepEqual(podStrategy.validate!(worse, legacy).map((e) => e.field), ['spec.containers[0].volumeMounts[0].name']);
  });
});
