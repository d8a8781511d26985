// Service-account tokens through the real API machinery: TokenRequest, JWT authentication with
// bound objects, the 3607 s extension, OIDC discovery, the ServiceAccount admission's projected
// volume, and what a node may ask for.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, decodeJwt, jwtVerify } from 'jose';
import { pollUntil } from '@nodelet/base';
import { startAuthTestServer, type AuthTestServer } from '../testing/auth-server.js';
import { ensureServiceAccountKey } from './signing-key.js';
import { ServiceAccountTokens } from './tokens.js';

const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const tokenPath = (ns: string, sa: string) => `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`;
const pod = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'busybox' }], ...extra } });

describe('service-account tokens', () => {
  let t: AuthTestServer;
  let dir: string;
  let now = Date.parse('2026-06-01T00:00:00Z');
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nodelet-sa-'));
    const key = await ensureServiceAccountKey(dir);
    t = await startAuthTestServer({ now: () => now, serviceAccountTokens: new ServiceAccountTokens({ issuer: ISSUER, audiences: [ISSUER], key }) });
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const whoami = (token: string) => t.call({ token }, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {});

  it('TokenRequest issues a JWT with upstream claims that authenticates as the service account', async () => {
    const r = await t.call('admin', 'POST', tokenPath('default', 'default'), { spec: { expirationSeconds: 600 } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    const token = r.json.status.token as string;
    const claims = decodeJwt(token) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const sa = (await t.call('admin', 'GET', '/api/v1/namespaces/default/serviceaccounts/default')).json;
    assert.equal(claims.iss, ISSUER);
    assert.equal(claims.sub, 'system:serviceaccount:default:default');
    assert.deepEqual(claims.aud, [ISSUER]);
    assert.equal(claims.exp - claims.iat, 600);
    assert.equal(claims.nbf, claims.iat);
    assert.match(claims.jti, /^[0-9a-f-]{36}$/);
    assert.deepEqual(claims['kubernetes.io'], { namespace: 'default', serviceaccount: { name: 'default', uid: sa.metadata.uid } });
    const me = await whoami(token);
    assert.equal(me.status, 201);
    assert.equal(me.json.status.userInfo.username, 'system:serviceaccount:default:default');
    assert.deepEqual(me.json.status.userInfo.groups, ['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    assert.equal(me.json.status.userInfo.uid, sa.metadata.uid);
    now += 661_000; // past exp and the one-minute leeway upstream allows for clock skew
    assert.equal((await whoami(token)).status, 401, 'expired');
    assert.equal((await t.call('admin', 'POST', tokenPath('default', 'default'), { spec: { expirationSeconds: 60 } })).status, 422);
    assert.equal((await t.call('admin', 'POST', tokenPath('default', 'nobody'), { spec: {} })).status, 404);
  });

  it('a token bound to a pod stops working when the pod is deleted; 3607 s tokens are extended with warnafter', async () => {
    const p = (await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('bound'))).json;
    const r = await t.call('admin', 'POST', tokenPath('default', 'default'), { spec: { expirationSeconds: 3607, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'bound', uid: p.metadata.uid } } });
    assert.equal(r.status, 201);
    const token = r.json.status.token as string;
    const claims = decodeJwt(token) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    assert.deepEqual(claims['kubernetes.io'].pod, { name: 'bound', uid: p.metadata.uid });
    assert.equal(claims['kubernetes.io'].warnafter, claims.iat + 3607);
    assert.equal(claims.exp - claims.iat, 365 * 24 * 3600);
    assert.equal(Date.parse(r.json.status.expirationTimestamp), (claims.iat + 3607) * 1000, 'the status reports the requested lifetime');
    const me = await whoami(token);
    assert.equal(me.status, 201);
    assert.deepEqual(me.json.status.userInfo.extra['authentication.kubernetes.io/pod-name'], ['bound']);
    assert.equal((await t.call('admin', 'DELETE', '/api/v1/namespaces/default/pods/bound')).status, 200);
    assert.equal((await whoami(token)).status, 401, 'the pod is gone');
    const stale = await t.call('admin', 'POST', tokenPath('default', 'default'), { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'bound', uid: p.metadata.uid } } });
    assert.equal(stale.status, 404);
  });

  it('OIDC discovery documents verify the tokens', async () => {
    const token = (await t.call('admin', 'POST', tokenPath('default', 'default'), { spec: {} })).json.status.token as string;
    const conf = await t.call({ token }, 'GET', '/.well-known/openid-configuration');
    assert.equal(conf.status, 200, 'readable by service accounts (system:service-account-issuer-discovery)');
    assert.equal(conf.json.issuer, ISSUER);
    assert.equal(conf.json.jwks_uri, 'https://kubernetes.default.svc.cluster.local/openid/v1/jwks');
    const set = await t.call({ token }, 'GET', '/openid/v1/jwks');
    const { payload } = await jwtVerify(token, createLocalJWKSet(set.json), { issuer: ISSUER, currentDate: new Date(now) });
    assert.equal(payload.sub, 'system:serviceaccount:default:default');
  });

  it('new pods get the kube-api-access projected volume unless they opt out; a missing account is refused', async () => {
    const r = await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('auto'));
    assert.equal(r.status, 201);
    const vol = (r.json.spec.volumes as Array<{ name: string; projected?: { sources: unknown[]; defaultMode: number } }>).find((v) => v.name.startsWith('kube-api-access-'))!;
    assert.match(vol.name, /^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    assert.deepEqual(vol.projected, {
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
    });
    assert.deepEqual(r.json.spec.containers[0].volumeMounts, [{ name: vol.name, readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }]);
    const optOut = await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('manual', { automountServiceAccountToken: false }));
    assert.equal(optOut.json.spec.volumes, undefined);
    const missing = await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('ghost', { serviceAccountName: 'ghost' }));
    assert.equal(missing.status, 403);
    assert.match(missing.json.message, /error looking up service account default\/ghost: serviceaccount "ghost" not found/);
    const cm = await t.call('admin', 'GET', '/api/v1/namespaces/default/configmaps/kube-root-ca.crt');
    assert.equal(cm.status, 200, 'the server publishes the CA in its namespaces at start');
  });

  it('a node may ask only for tokens bound to its own pods', async () => {
    for (const n of ['node-1', 'node-2']) await t.call('admin', 'POST', '/api/v1/nodes', { metadata: { name: n } });
    const mine = (await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('on-1', { nodeName: 'node-1' }))).json;
    const theirs = (await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('on-2', { nodeName: 'node-2' }))).json;
    const ask = (p: { metadata: { name: string; uid: string } } | undefined) =>
      t.call('node1', 'POST', tokenPath('default', 'default'), { spec: { ...(p ? { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: p.metadata.name, uid: p.metadata.uid } } : {}) } });
    assert.equal((await ask(mine)).status, 201);
    const other = await ask(theirs);
    assert.equal(other.status, 403);
    assert.match(other.json.message, /node requested token bound to a pod scheduled on a different node/);
    assert.match((await ask(undefined)).json.message, /node requested token not bound to a pod/);
  });

  it("a node's token request reads the account and the pod together, and the pod once: NodeRestriction reads it from memory", async () => {
    const p = (await t.call('admin', 'POST', '/api/v1/namespaces/default/pods', pod('reads', { nodeName: 'node-1' }))).json;
    const podsDef = t.server.context.resource('', 'v1', 'pods')!.def;
    await pollUntil('the pod in the server mirror', () => t.server.context.lookupMirrorOf?.(podsDef)?.get('default', 'reads')?.metadata.uid === p.metadata.uid, { timeoutMs: 5000 });
    // Each read of the store is held 20 ms, as a round trip to etcd is: reads made together overlap.
    const store = t.store as { get: typeof t.store.get };
    const original = store.get;
    const reads: string[] = [];
    let inFlight = 0;
    let most = 0;
    store.get = async function (this: unknown, key, opts) {
      reads.push(key);
      most = Math.max(most, ++inFlight);
      try {
        await new Promise((r) => setTimeout(r, 20));
        return await original.call(this, key, opts);
      } finally {
        inFlight--;
      }
    };
    try {
      const r = await t.call('node1', 'POST', tokenPath('default', 'default'), { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'reads', uid: p.metadata.uid } } });
      assert.equal(r.status, 201, JSON.stringify(r.json));
    } finally {
      store.get = original;
    }
    assert.equal(reads.filter((k) => k.endsWith('/pods/default/reads')).length, 1, `pod reads: ${reads.join(', ')}`);
    assert.ok(most >= 2, `the account and the pod were read one after the other: ${reads.join(', ')}`);
  });

  it('a mirror pod (no service account) opens no account: not even `default` of its namespace', async () => {
    const node1 = (await t.call('admin', 'GET', '/api/v1/nodes/node-1')).json;
    const mirror = await t.call('node1', 'POST', '/api/v1/namespaces/kube-system/pods', {
      metadata: { name: 'static-x', annotations: { 'kubernetes.io/config.mirror': 'h' }, ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: node1.metadata.uid, controller: true }] },
      spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x' }] },
    });
    assert.equal(mirror.status, 201, JSON.stringify(mirror.json));
    assert.equal(mirror.json.spec.serviceAccountName, undefined, 'the ServiceAccount admission leaves mirror pods alone');
    const r = await t.call('node1', 'POST', tokenPath('kube-system', 'default'), { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'static-x', uid: mirror.json.metadata.uid } } });
    assert.equal(r.status, 403, JSON.stringify(r.json));
    assert.match(r.json.message, /no relationship found between node 'node-1' and this object: no pod bound to it runs as service account "default"/);
    // Even for the admin, a pod binds only its own account's token (upstream's TokenRequest).
    const asAdmin = await t.call('admin', 'POST', tokenPath('kube-system', 'default'), { spec: { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'static-x', uid: mirror.json.metadata.uid } } });
    assert.equal(asAdmin.status, 400);
    assert.equal(asAdmin.json.message, 'cannot bind token for serviceaccount "default" to pod running with different serviceaccount name.');
  });
});
