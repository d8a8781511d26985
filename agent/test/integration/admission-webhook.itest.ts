/**
 * An admission webhook running as a pod, reached through its Service as kube-apiserver reaches
 * one: the real API server resolves the Service's EndpointSlice (kept by the endpointslice
 * controller) to the pod's IP, verifies the pod's certificate for `hooks.default.svc` with the
 * configuration's caBundle, and returns the pod's refusal; the same pod's /mutate path is a
 * mutating webhook whose JSONPatch lands in the stored object. The webhook is a small static TLS
 * server (images/webhook-tls/webhook-tls.c, compiled here) run from a hostPath in the lab's
 * busybox image.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from '@nodelet/base';
import { ApiClient, CONFIGMAPS, ENDPOINTSLICES, MUTATINGWEBHOOKCONFIGURATIONS, PODS, SERVICES, VALIDATINGWEBHOOKCONFIGURATIONS, type EndpointSlice } from '@nodelet/api';
import { createCa, issueCertificate, loadCa } from '@nodelet/control-plane';
import { skipUnlessRoot, startHarness, podSpec, type Harness } from './harness.js';

const SOURCE = fileURLToPath(new URL('../../../images/webhook-tls/webhook-tls.c', import.meta.url));

let h: Harness | undefined;
let skip = false;

before(async (t) => {
  if (!skipUnlessRoot(t as never)) {
    skip = true;
    return;
  }
  h = await startHarness('webhook', {}, 27, { controllers: ['endpointslice'] });
});

after(async () => {
  await h?.stop();
});

test('a validating and a mutating webhook in a pod, called through its Service', { timeout: 240_000 }, async (t) => {
  if (skip) return t.skip('needs root');
  const dir = join(h!.dir, 'webhook');
  await mkdir(dir, { recursive: true });
  const cc = spawnSync('gcc', ['-static', '-O2', '-s', '-o', join(dir, 'webhook-tls'), SOURCE, '-lssl', '-lcrypto', '-lpthread'], { encoding: 'utf8' });
  assert.equal(cc.status, 0, cc.stderr);
  const caPair = await createCa('webhook test CA');
  const serving = await issueCertificate(await loadCa(caPair), { commonName: 'hooks', usage: 'server', dnsNames: ['hooks.default.svc'] });
  await writeFile(join(dir, 'cert.pem'), serving.certPem);
  await writeFile(join(dir, 'key.pem'), serving.keyPem);

  const pod = podSpec(h!, 'hook-pod', {
    containers: [{
      name: 'webhook', image: h!.rt.images.busybox, imagePullPolicy: 'IfNotPresent',
      command: ['/hook/webhook-tls', '8443', '/hook/cert.pem', '/hook/key.pem'],
      ports: [{ name: 'https', containerPort: 8443 }],
      readinessProbe: { tcpSocket: { port: 8443 }, periodSeconds: 1 },
      volumeMounts: [{ name: 'hook', mountPath: '/hook', readOnly: true }],
    }],
    volumes: [{ name: 'hook', hostPath: { path: dir, type: 'Directory' } }],
  });
  pod.metadata!.labels = { app: 'hooks' };
  await h!.api.create(PODS, pod);
  await h!.api.create(SERVICES, { metadata: { name: 'hooks', namespace: 'default' }, spec: { selector: { app: 'hooks' }, ports: [{ name: 'https', port: 443, targetPort: 8443 }] } } as never);
  await pollUntil('a ready endpoint of Service hooks', async () => {
    const slices = await h!.api.list(ENDPOINTSLICES, { namespace: 'default', labelSelector: 'kubernetes.io/service-name=hooks' });
    return slices.items.some((s: EndpointSlice) => (s.endpoints ?? []).some((e) => e.conditions?.ready));
  }, { timeoutMs: 120_000, intervalMs: 250 });

  // JSON: the webhook configuration kinds have no protobuf form here.
  const api = new ApiClient({ server: h!.cp.url, token: h!.cp.adminToken, ca: h!.cp.caPem, timeoutMs: 30_000 });
  try {
    await api.create(VALIDATINGWEBHOOKCONFIGURATIONS, {
      metadata: { name: 'pod-hook' },
      webhooks: [{
        name: 'pod.hooks.example.com',
        clientConfig: { service: { namespace: 'default', name: 'hooks' }, caBundle: Buffer.from(caPair.certPem).toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        objectSelector: { matchLabels: { hooked: 'yes' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      }],
    } as never);
    let n = 0;
    const err = await pollUntil('the pod refuses a ConfigMap', async () => {
      const e = await api.create(CONFIGMAPS, { metadata: { name: `cm-${n++}`, namespace: 'default', labels: { hooked: 'yes' } } } as never).then(() => undefined, (x: unknown) => x as { httpStatus?: number; message?: string });
      return e?.httpStatus === 403 ? e : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });
    assert.match(String(err.message), /admission webhook "pod\.hooks\.example\.com" denied the request: refused by pod hook-pod/);
    // Unlabelled objects are not the webhook's.
    await api.create(CONFIGMAPS, { metadata: { name: 'free', namespace: 'default' } } as never);

    await api.create(MUTATINGWEBHOOKCONFIGURATIONS, {
      metadata: { name: 'pod-mutator' },
      webhooks: [{
        name: 'mutate.hooks.example.com',
        clientConfig: { service: { namespace: 'default', name: 'hooks', path: '/mutate' }, caBundle: Buffer.from(caPair.certPem).toString('base64') },
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        objectSelector: { matchLabels: { mutate: 'yes' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      }],
    } as never);
    let m = 0;
    const mutated = await pollUntil('the pod\'s JSONPatch in a stored ConfigMap', async () => {
      const cm = (await api.create(CONFIGMAPS, { metadata: { name: `mut-${m++}`, namespace: 'default', labels: { mutate: 'yes' } } } as never)) as { metadata: { name: string } };
      const stored = (await api.get(CONFIGMAPS, cm.metadata.name, { namespace: 'default' })) as { metadata: { labels?: Record<string, string> } };
      return stored.metadata.labels?.['mutated-by'] ? stored : undefined;
    }, { timeoutMs: 30_000, intervalMs: 250 });
    assert.equal(mutated.metadata.labels?.['mutated-by'], 'hook-pod');
  } finally {
    api.close();
  }
});
