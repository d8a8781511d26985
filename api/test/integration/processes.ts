/**
 * Helpers for the client integration tests around the kit's real processes
 * (`@nodelet/base/testing`): an admin bearer token for a `nodelet server`, and a private etcd
 * that can compact its history.
 */
import { freePort, startEtcdMember } from '@nodelet/base/testing';
import { hasCode, pollUntil } from '@nodelet/base';
import { ApiClient, CLUSTERROLEBINDINGS, CONFIGMAPS, loadKubeconfig, SERVICEACCOUNTS, type KubeObject } from '../../src/index.js';

/**
 * A bearer token with cluster-admin rights on a `nodelet server` process, for tests that write
 * raw requests with an Authorization header. The server keeps no static admin token (its admin
 * credential is admin.kubeconfig's client certificate, docs/security.md), so this is what an
 * operator would do: a service account bound to cluster-admin, and a TokenRequest for it (an hour;
 * the account, the binding and the service-account key survive restarts).
 */
export async function adminBearerToken(kubeconfig: string): Promise<string> {
  const cfg = await loadKubeconfig(kubeconfig);
  const admin = new ApiClient(cfg);
  try {
    const ignoreExisting = (err: unknown): void => {
      if (!hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
    };
    await admin.create(SERVICEACCOUNTS, { metadata: { name: 'test-admin', namespace: 'kube-system' } }).catch(ignoreExisting);
    await admin.create(CLUSTERROLEBINDINGS, {
      metadata: { name: 'test-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'test-admin', namespace: 'kube-system' }],
    }).catch(ignoreExisting);
    const review = await admin.create<KubeObject, KubeObject & { status: { token: string } }>(SERVICEACCOUNTS, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', metadata: {}, spec: { expirationSeconds: 3600 } } as KubeObject, { namespace: 'kube-system', name: 'test-admin', subresource: 'token' });
    const token = review.status.token;
    // The RBAC cache takes the new binding in shortly after the write.
    const probe = new ApiClient({ server: cfg.server, ...(cfg.ca ? { ca: cfg.ca } : {}), token });
    try {
      await pollUntil('the test-admin binding to take effect', () => probe.list(CONFIGMAPS, { namespace: 'kube-system', limit: 1 }).then(() => true, () => false), { timeoutMs: 10_000, intervalMs: 50 });
    } finally {
      probe.close();
    }
    return token;
  } finally {
    admin.close();
  }
}

export interface EtcdProcess {
  endpoint: string;
  /** Compacts etcd's history up to its current revision (what kube-apiserver's compactor does). */
  compactAll(): Promise<number>;
  stop(): Promise<void>;
}

/** A private single-member etcd on loopback (the kit's etcd member), ready when /health says so. */
export async function startEtcd(dataDir: string): Promise<EtcdProcess> {
  const [client, peer] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${client}`;
  const member = await startEtcdMember({ name: 'itest', dataDir, clientUrl: endpoint, peerUrl: `http://127.0.0.1:${peer}` });
  // etcd 3.4's JSON gateway (/v3/kv/...): no gRPC client needed for two calls.
  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const res = await fetch(`${endpoint}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, unknown>;
  };
  return {
    endpoint,
    async compactAll() {
      const range = await post('/v3/kv/range', { key: Buffer.from('/').toString('base64'), limit: 1 });
      const revision = Number((range.header as { revision: string }).revision);
      await post('/v3/kv/compaction', { revision: String(revision), physical: true });
      return revision;
    },
    stop: () => member.stop(),
  };
}
