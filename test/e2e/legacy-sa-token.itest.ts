// Legacy service-account token Secrets with the real kubectl: a Secret of type
// kubernetes.io/service-account-token naming an account is filled by the serviceaccount-token
// controller (token, ca.crt, namespace, the account's UID), the token authenticates as the account
// (`kubectl --token`), a Secret naming no existing account is deleted, and deleting the account
// deletes its Secret and the token stops working.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { NAMESPACE_SETUP_CONTROLLERS } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const tokenSecret = (name: string, account: string): string => `apiVersion: v1
kind: Secret
metadata:
  name: ${name}
  annotations: {kubernetes.io/service-account.name: ${account}}
type: kubernetes.io/service-account-token
`;

describe('legacy service-account token Secrets', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv({ controllers: [...NAMESPACE_SETUP_CONTROLLERS, 'serviceaccount-token'] });
    k = await env.newKubectl();
    assert.equal((await k(['create', 'ns', 'tok'])).code, 0);
  });
  after(() => env?.close());

  const secretGone = async (name: string): Promise<boolean> => (await env.api('GET', `/api/v1/namespaces/tok/secrets/${name}`)).status === 404;

  it('is filled, authenticates as its account, and goes with the account', async () => {
    assert.equal((await k(['-n', 'tok', 'create', 'sa', 'builder'])).code, 0);
    const created = await k(['-n', 'tok', 'create', '-f', '-'], { stdin: tokenSecret('builder-token', 'builder') });
    assert.equal(created.code, 0, created.stderr);
    let secret: { data?: Record<string, string>; metadata: { annotations: Record<string, string> } } = { metadata: { annotations: {} } };
    await pollUntil('the token Secret filled', async () => {
      secret = (await env.api('GET', '/api/v1/namespaces/tok/secrets/builder-token')).json();
      return !!secret.data?.token;
    }, { timeoutMs: 15_000 });
    const saUid = (await k(['-n', 'tok', 'get', 'sa', 'builder', '-o', 'jsonpath={.metadata.uid}'])).stdout;
    assert.equal(secret.metadata.annotations['kubernetes.io/service-account.uid'], saUid);
    assert.equal(Buffer.from(secret.data!.namespace!, 'base64').toString(), 'tok');
    assert.equal(Buffer.from(secret.data!['ca.crt']!, 'base64').toString(), env.cp.caPem);
    const token = Buffer.from(secret.data!.token!, 'base64').toString();
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    assert.equal(claims.iss, 'kubernetes/serviceaccount');
    assert.equal(claims.sub, 'system:serviceaccount:tok:builder');
    assert.equal(claims['kubernetes.io/serviceaccount/secret.name'], 'builder-token');
    assert.equal(claims['kubernetes.io/serviceaccount/service-account.uid'], saUid);
    assert.equal(claims.exp, undefined, 'legacy tokens do not expire');

    const asBuilder = await env.newKubectl({ token });
    const who = await asBuilder(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    assert.equal(who.code, 0, who.stderr);
    assert.equal(who.stdout, 'system:serviceaccount:tok:builder');

    assert.equal((await k(['-n', 'tok', 'delete', 'sa', 'builder'])).code, 0);
    await pollUntil('the Secret deleted with its account', () => secretGone('builder-token'), { timeoutMs: 15_000 });
    const refused = await asBuilder(['auth', 'whoami']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Unauthorized|must be logged in/);
  });

  it('a token Secret must name its account', async () => {
    const bad = await k(['-n', 'tok', 'create', 'secret', 'generic', 'anon', '--type=kubernetes.io/service-account-token']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /metadata\.annotations\[kubernetes\.io\/service-account\.name\]: Required value/);
  });

  it('a token Secret whose account does not exist is deleted', async () => {
    const created = await k(['-n', 'tok', 'create', '-f', '-'], { stdin: tokenSecret('ghost-token', 'ghost') });
    assert.equal(created.code, 0, created.stderr);
    await pollUntil('the orphan token Secret deleted', () => secretGone('ghost-token'), { timeoutMs: 15_000 });
  });

  it('a token copied into a Secret it does not belong to, or edited, does not authenticate', async () => {
    assert.equal((await k(['-n', 'tok', 'create', 'sa', 'b2'])).code, 0);
    assert.equal((await k(['-n', 'tok', 'create', '-f', '-'], { stdin: tokenSecret('b2-token', 'b2') })).code, 0);
    let token = '';
    await pollUntil('filled', async () => {
      const s = (await env.api('GET', '/api/v1/namespaces/tok/secrets/b2-token')).json() as { data?: { token?: string } };
      token = s.data?.token ? Buffer.from(s.data.token, 'base64').toString() : '';
      return token !== '';
    }, { timeoutMs: 15_000 });
    assert.equal((await env.api('GET', '/api/v1/namespaces/tok/pods', { token })).status, 403, 'authenticated, not authorized');
    const patched = await env.api('PATCH', '/api/v1/namespaces/tok/secrets/b2-token', { body: JSON.stringify({ data: { token: Buffer.from('other').toString('base64') } }), contentType: 'application/merge-patch+json' });
    assert.equal(patched.status, 200, patched.body);
    assert.equal((await env.api('GET', '/api/v1/namespaces/tok/pods', { token })).status, 401, 'the Secret no longer holds the token');
  });
});
