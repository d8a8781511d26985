// `nodelet token create` + `nodelet join` against a real `nodelet server` (in-process, HTTPS on
// 127.0.0.1:0, SQLite in a temp dir): the happy path yields the cluster CA (the agent's client CA),
// a 0600 token file with its lifetime and a 0600 kubeconfig taking its token from there, whose
// credential is limited to its node; re-joining an existing node needs a token made for it; every refusal (bad, unknown, expired, reused token; wrong CA hash; server
// down) says what happened and what to do, and a wrong CA hash aborts before the token is sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startControlPlane } from '@nodelet/control-plane';
import { ApiClient, loadKubeconfig, NODES, readCredential, SECRETS } from '@nodelet/api';
import { errCode } from '@nodelet/base';
import { createToken, listTokens } from '../../src/commands/ops/token.js';
import { join as joinCluster } from '../../src/commands/ops/join.js';
import { cleanups, freePort } from '@nodelet/base/testing';

test('join: token exchange, CA pinning and every refusal', async (t) => {
  const cleanup = cleanups(t);
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-join-'));
  cleanup(() => rmSync(dir, { recursive: true, force: true }));
  const cp = await startControlPlane({ dataDir: join(dir, 'server'), bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false });
  cleanup(() => cp.close());
  const admin = cp.kubeconfigPath;
  const kc = (name: string) => join(dir, `${name}.kubeconfig`);

  await t.test('a fresh token joins; CA, token file and kubeconfig are written; the credential is limited to its node', async () => {
    const tok = await createToken({ kubeconfig: admin, ttlMs: 3_600_000 });
    assert.match(tok.token, /^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    assert.match(tok.joinCommand, /^nodelet join https:\/\/127\.0\.0\.1:\d+ --token [a-z0-9.]+ --ca-cert-hash sha256:[0-9a-f]{64}$/);
    assert.deepEqual((await listTokens({ kubeconfig: admin })).map((x) => x.id), [tok.token.slice(0, 6)]);
    const r = await joinCluster({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash, nodeName: 'node-a', kubeconfigPath: kc('node-a') });
    assert.equal(r.user, 'system:node:node-a');
    assert.equal(statSync(kc('node-a')).mode & 0o777, 0o600);
    // The cluster CA, for the agent's authentication.x509.clientCAFile.
    assert.equal(r.caFile, join(dir, 'pki', 'ca.crt'));
    assert.equal(readFileSync(r.caFile, 'utf8').trim(), cp.caPem.trim());
    // The credential in a 0600 token file the kubeconfig names, with its lifetime recorded for renewal.
    assert.equal(r.tokenFile, join(dir, 'agent.token'));
    assert.equal(statSync(r.tokenFile).mode & 0o777, 0o600);
    const cfg = await loadKubeconfig(kc('node-a'));
    assert.equal(cfg.tokenFile, r.tokenFile);
    assert.equal(cfg.token, undefined, 'not inline: the agent replaces the file when it renews');
    const cred = await readCredential({ kind: 'tokenFile', path: r.tokenFile });
    assert.match(cred.token, /^node\./);
    assert.ok(cred.lifetime && cred.lifetime.expiresAt === r.expiresAt && r.expiresAt! > Date.now() + 300 * 86_400_000, 'a year, recorded');
    const node = new ApiClient(await loadKubeconfig(kc('node-a')));
    cleanup(() => node.close());
    await node.create(NODES, { metadata: { name: 'node-a' } } as never);
    await assert.rejects(node.create(NODES, { metadata: { name: 'node-b' } } as never), (e) => errCode(e) === 'ERR_PERMISSION_DENIED');
    await assert.rejects(node.list(SECRETS, { namespace: 'kube-system' }), (e) => errCode(e) === 'ERR_PERMISSION_DENIED');
  });

  await t.test('re-joining an existing node needs a token made for it', async () => {
    const tok = await createToken({ kubeconfig: admin, ttlMs: 3_600_000 });
    await assert.rejects(
      joinCluster({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash, nodeName: 'node-a', kubeconfigPath: kc('again') }),
      /node "node-a" already exists.*nodelet token create --node-name node-a/,
    );
    const forIt = await createToken({ kubeconfig: admin, ttlMs: 3_600_000, nodeName: 'node-a' });
    const r = await joinCluster({ server: forIt.server, token: forIt.token, caCertHash: forIt.caCertHash, nodeName: 'node-a', kubeconfigPath: kc('again') });
    assert.equal(r.user, 'system:node:node-a');
  });

  await t.test('a used token is refused with a hint to create a new one', async () => {
    const tok = await createToken({ kubeconfig: admin, ttlMs: 3_600_000 });
    await joinCluster({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash, nodeName: 'node-c', kubeconfigPath: kc('node-c') });
    await assert.rejects(
      joinCluster({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash, nodeName: 'node-d', kubeconfigPath: kc('node-d') }),
      /refused the token \(unknown, expired or already used\).*nodelet token create/,
    );
    assert.equal(existsSync(kc('node-d')), false);
  });

  await t.test('an expired token is refused', async () => {
    const tok = await createToken({ kubeconfig: admin, ttlMs: 1_000, now: Date.now() - 60_000 });
    await assert.rejects(
      joinCluster({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash, nodeName: 'node-e', kubeconfigPath: kc('node-e') }),
      /refused the token/,
    );
  });

  await t.test('an unknown or malformed token is refused', async () => {
    const tok = await createToken({ kubeconfig: admin, ttlMs: 3_600_000 });
    await assert.rejects(
      joinCluster({ server: tok.server, token: 'abcdef.0123456789abcdef', caCertHash: tok.caCertHash, kubeconfigPath: kc('x') }),
      /refused the token/,
    );
    await assert.rejects(joinCluster({ server: tok.server, token: 'not-a-token', caCertHash: tok.caCertHash, kubeconfigPath: kc('x') }), /must look like abcdef\.0123456789abcdef/);
  });

  await t.test('a wrong CA hash aborts before the token is sent (the token still works afterwards)', async () => {
    const tok = await createToken({ kubeconfig: admin, ttlMs: 3_600_000 });
    const wrong = `sha256:${'0'.repeat(64)}`;
    await assert.rejects(
      joinCluster({ server: tok.server, token: tok.token, caCertHash: wrong, nodeName: 'node-f', kubeconfigPath: kc('node-f') }),
      /CA hash is sha256:[0-9a-f]{64}, not sha256:0{64}: refusing to send the token/,
    );
    // Had the token been sent, the server would have consumed it; it is still good.
    await joinCluster({ server: tok.server, token: tok.token, caCertHash: tok.caCertHash, nodeName: 'node-f', kubeconfigPath: kc('node-f') });
  });

  await t.test('a server that is down is named', async () => {
    const port = await freePort(); // nothing listens there
    await assert.rejects(
      joinCluster({ server: `https://127.0.0.1:${port}`, token: 'abcdef.0123456789abcdef', caCertHash: `sha256:${'a'.repeat(64)}`, kubeconfigPath: kc('y') }),
      /cannot reach the server at 127\.0\.0\.1:\d+.*nodelet server/,
    );
  });
});
