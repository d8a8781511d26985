// PodSecurity admission against the real API machinery (SQLite in a temp dir, HTTP on port 0):
// refusals, Warning headers, workloads, namespace label changes, exemptions, audit annotations.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, TEST_ADMIN_TOKEN as ADMIN, type TestApiServer } from '../../testing/test-server.js';
import type { AdmissionRequest } from '../types.js';
import { podSecurityAdmission } from './admission.js';
import { podSecurityConfigFrom } from './config.js';

const EXEMPT_USER = 'exempt-user-token';
const P = 'pod-security.kubernetes.io/';

interface Reply {
  status: number;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  warnings: string[];
}

/** Each `Warning` header's text, unquoted (`299 - "…"`). */
function warningsOf(h: Headers): string[] {
  const raw = h.get('warning');
  if (!raw) return [];
  return [...raw.matchAll(/299 - "((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}

describe('PodSecurity admission', () => {
  let srv: TestApiServer;
  const call = async (method: string, path: string, body?: unknown, token = ADMIN, contentType?: string): Promise<Reply> => {
    const r = await srv.call(method, path, body, { token, contentType });
    return { status: r.status, json: r.json, warnings: warningsOf(r.headers) };
  };
  const pod = (name: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}) => ({
    metadata: { name },
    spec: { automountServiceAccountToken: false, containers: [{ name: 'c', image: 'busybox:1.36', ...container }], ...spec },
  });
  const namespace = async (name: string, labels: Record<string, string>): Promise<void> => {
    assert.equal((await call('POST', '/api/v1/namespaces', { metadata: { name, labels } })).status, 201);
    assert.equal((await call('POST', `/api/v1/namespaces/${name}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
  };

  before(async () => {
    srv = await startTestApiServer({
      tokens: new Map([[EXEMPT_USER, { name: 'exempt-user', groups: ['system:masters'] }]]),
      podSecurity: podSecurityConfigFrom({
        apiVersion: 'pod-security.admission.config.k8s.io/v1',
        kind: 'PodSecurityConfiguration',
        exemptions: { usernames: ['exempt-user'], namespaces: ['exempt-ns'], runtimeClasses: ['kata'] },
      }),
    });
    await namespace('strict', { [`${P}enforce`]: 'restricted' });
    await namespace('warned', { [`${P}warn`]: 'baseline' });
    await namespace('exempt-ns', {});
  });
  after(() => srv?.close());

  it('enforce=restricted refuses a plain pod with upstream\'s message', async () => {
    const r = await call('POST', '/api/v1/namespaces/strict/pods', pod('x'));
    assert.equal(r.status, 403);
    assert.equal(r.json.reason, 'Forbidden');
    assert.equal(
      r.json.message,
      'pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    assert.deepEqual(r.warnings, [], 'a refused request gets no warning besides');
    const ok = pod('ok', { securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } } }, { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } });
    assert.equal((await call('POST', '/api/v1/namespaces/strict/pods', ok)).status, 201);
  });

  it('warn=baseline admits with a Warning header', async () => {
    const r = await call('POST', '/api/v1/namespaces/warned/pods', pod('priv', { hostNetwork: true }, { securityContext: { privileged: true } }));
    assert.equal(r.status, 201);
    assert.deepEqual(r.warnings, ['would violate PodSecurity "baseline:latest": host namespaces (hostNetwork=true), privileged (container "c" must not set securityContext.privileged=true)']);
    assert.deepEqual((await call('POST', '/api/v1/namespaces/warned/pods', pod('plain'))).warnings, []);
  });

  it('workloads in an enforced namespace are created with a warning only', async () => {
    const template = { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36', securityContext: { privileged: true } }] } };
    const r = await call('POST', '/apis/apps/v1/namespaces/strict/deployments', { metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'd' } }, template } });
    assert.equal(r.status, 201, JSON.stringify(r.json));
    assert.equal(r.warnings.length, 1);
    assert.match(r.warnings[0]!, /^would violate PodSecurity "restricted:latest": privileged \(container "c" must not set securityContext\.privileged=true\), allowPrivilegeEscalation != false/);
    const cron = await call('POST', '/apis/batch/v1/namespaces/strict/cronjobs', {
      metadata: { name: 'cj' },
      spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', hostPID: true, containers: [{ name: 'c', image: 'busybox:1.36' }] } } } } },
    });
    assert.equal(cron.status, 201, JSON.stringify(cron.json));
    assert.match(cron.warnings[0]!, /^would violate PodSecurity "restricted:latest": host namespaces \(hostPID=true\), /);
  });

  it('the default namespaces: kube-system enforced privileged, default warned at baseline', async () => {
    assert.equal((await call('GET', '/api/v1/namespaces/kube-system')).json.metadata.labels[`${P}enforce`], 'privileged');
    assert.equal((await call('GET', '/api/v1/namespaces/default')).json.metadata.labels[`${P}warn`], 'baseline');
    const r = await call('POST', '/api/v1/namespaces/kube-system/pods', pod('sys', { hostNetwork: true }, { securityContext: { privileged: true } }));
    assert.equal(r.status, 201);
    assert.deepEqual(r.warnings, []);
  });

  it('bad labels refuse a namespace (422); tightening enforce lists the pods that would be refused', async () => {
    const bad = await call('POST', '/api/v1/namespaces', { metadata: { name: 'bad', labels: { [`${P}enforce`]: 'strict' } } });
    assert.equal(bad.status, 422);
    assert.equal(bad.json.message, 'Namespace "bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted');
    const tightened = await call('PATCH', '/api/v1/namespaces/warned', { metadata: { labels: { [`${P}enforce`]: 'baseline' } } }, ADMIN, 'application/merge-patch+json');
    assert.equal(tightened.status, 200);
    assert.deepEqual(tightened.warnings, ['existing pods in namespace "warned" violate the new PodSecurity enforce level "baseline:latest"', 'priv: host namespaces, privileged']);
    const relabel = await call('PATCH', '/api/v1/namespaces/warned', { metadata: { labels: { team: 'a' } } }, ADMIN, 'application/merge-patch+json');
    assert.deepEqual(relabel.warnings, [], 'enforce unchanged: nothing to check');
  });

  // The namespace's parsed policy is kept per namespace object and resourceVersion: each label
  // change is in force for the very next pod.
  it('a namespace label change is in force for the next pod create, each way', async () => {
    await namespace('relabelled', { [`${P}enforce`]: 'privileged' });
    const privileged = (name: string) => pod(name, { hostNetwork: true });
    assert.equal((await call('POST', '/api/v1/namespaces/relabelled/pods', privileged('a'))).status, 201);
    const set = (level: string) => call('PATCH', '/api/v1/namespaces/relabelled', { metadata: { labels: { [`${P}enforce`]: level } } }, ADMIN, 'application/merge-patch+json');
    assert.equal((await set('baseline')).status, 200);
    const refused = await call('POST', '/api/v1/namespaces/relabelled/pods', privileged('b'));
    assert.equal(refused.status, 403);
    assert.match(refused.json.message, /violates PodSecurity "baseline:latest": host namespaces/);
    assert.equal((await set('privileged')).status, 200);
    assert.equal((await call('POST', '/api/v1/namespaces/relabelled/pods', privileged('c'))).status, 201);
  });

  it('updates that change no image are not judged; an image change is', async () => {
    // `priv` violates the baseline enforce level `warned` now has.
    const labelled = await call('PATCH', '/api/v1/namespaces/warned/pods/priv', { metadata: { labels: { a: 'b' } } }, ADMIN, 'application/merge-patch+json');
    assert.equal(labelled.status, 200);
    const reimaged = await call('PATCH', '/api/v1/namespaces/warned/pods/priv', { spec: { containers: [{ name: 'c', image: 'busybox:1.37' }] } }, ADMIN, 'application/strategic-merge-patch+json');
    assert.equal(reimaged.status, 403);
    assert.match(reimaged.json.message, /^pods "priv" is forbidden: violates PodSecurity "baseline:latest": host namespaces \(hostNetwork=true\), privileged/);
  });

  it('exemptions: usernames, namespaces, runtime classes', async () => {
    const privileged = (name: string, spec: Record<string, unknown> = {}) => pod(name, spec, { securityContext: { privileged: true } });
    assert.equal((await call('POST', '/api/v1/namespaces/strict/pods', privileged('by-user'), EXEMPT_USER)).status, 201);
    assert.equal((await call('POST', '/api/v1/namespaces/strict/pods', privileged('by-admin'))).status, 403);
    assert.equal((await call('POST', '/apis/node.k8s.io/v1/runtimeclasses', { metadata: { name: 'kata' }, handler: 'kata' })).status, 201);
    assert.equal((await call('POST', '/api/v1/namespaces/strict/pods', privileged('by-class', { runtimeClassName: 'kata' }))).status, 201);
    const labelled = await call('PATCH', '/api/v1/namespaces/exempt-ns', { metadata: { labels: { [`${P}enforce`]: 'restricted' } } }, ADMIN, 'application/merge-patch+json');
    // Only the modes the labels name are listed (warn follows enforce here, unlabelled).
    assert.deepEqual(labelled.warnings, ['namespace "exempt-ns" is exempt from Pod Security, and the policy (enforce=restricted:latest) will be ignored']);
    assert.equal((await call('POST', '/api/v1/namespaces/exempt-ns/pods', privileged('in-ns'))).status, 201);
  });

  it('records audit annotations: the enforced policy, audit violations, exemptions', async () => {
    const ctx = srv.server.context;
    const run = async (r: Omit<AdmissionRequest, 'recorder' | 'def'>): Promise<{ annotations: Record<string, string>; warnings: string[]; error?: string }> => {
      const annotations: Record<string, string> = {};
      const warnings: string[] = [];
      let error: string | undefined;
      await Promise.resolve(
        podSecurityAdmission(ctx, { ...r, def: ctx.resource('', 'v1', 'pods')!.def, recorder: { warn: (t) => warnings.push(t), annotate: (k, v) => (annotations[k] = v) } }),
      ).catch((err: Error) => (error = err.message));
      return { annotations, warnings, ...(error ? { error } : {}) };
    };
    assert.equal((await call('POST', '/api/v1/namespaces', { metadata: { name: 'audited', labels: { [`${P}audit`]: 'baseline' } } })).status, 201);
    const user = { name: 'admin', groups: [] };
    const object = { metadata: { name: 'p', namespace: 'audited' }, spec: { containers: [{ name: 'c', image: 'x', securityContext: { privileged: true } }] } };
    assert.deepEqual(await run({ operation: 'CREATE', user, namespace: 'audited', name: 'p', object }), {
      annotations: {
        [`${P}enforce-policy`]: 'privileged:latest',
        [`${P}audit-violations`]: 'would violate PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)',
      },
      warnings: [],
    });
    assert.deepEqual((await run({ operation: 'CREATE', user, namespace: 'default', name: 'p', object: { ...object, spec: { containers: [{ name: 'c', image: 'x' }] } } })).annotations, {
      [`${P}enforce-policy`]: 'privileged:latest',
    });
    assert.deepEqual((await run({ operation: 'CREATE', user: { name: 'exempt-user', groups: [] }, namespace: 'strict', name: 'p', object })).annotations, { [`${P}exempt`]: 'user' });
    assert.deepEqual((await run({ operation: 'CREATE', user, namespace: 'exempt-ns', name: 'p', object })).annotations, { [`${P}exempt`]: 'namespace' });
    const refused = await run({ operation: 'CREATE', user, namespace: 'strict', name: 'p', object });
    assert.equal(refused.annotations[`${P}enforce-policy`], 'restricted:latest');
    assert.match(refused.error!, /^pods "p" is forbidden: violates PodSecurity "restricted:latest": privileged/);
  });
});
