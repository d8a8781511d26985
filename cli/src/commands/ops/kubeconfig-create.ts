/**
 * `nodelet kubeconfig create --user alice [--group devs …] [--days 365] [-o alice.kubeconfig]`:
 * a kubeconfig that logs in with a client certificate signed by the cluster CA — the upstream
 * way to add a user (there are no User objects: the certificate's CN is the user, each O a group).
 *
 *   new key + CSR (CN=user, O=groups) ─▶ CertificateSigningRequest (kubernetes.io/kube-apiserver-client)
 *   ─▶ approved with the admin kubeconfig ─▶ the server's signer issues ─▶ kubeconfig 0600
 *
 * The key never leaves this machine. The new user may do nothing until an admin binds roles
 * (`kubectl create rolebinding … --user alice` / `--group devs`).
 */
import { existsSync } from 'node:fs';
import { AgentError } from '@nodelet/base';
import { ApiClient, CERTIFICATESIGNINGREQUESTS, generateKeyAndCsr, loadKubeconfig, requestCertificate, rfc3339, SIGNER_KUBE_APISERVER_CLIENT, writeKubeconfig } from '@nodelet/api';

export interface KubeconfigCreateOptions {
  /** Admin kubeconfig used to submit and approve the request. */
  adminKubeconfig: string;
  user: string;
  groups: string[];
  days: number;
  out: string;
  /** Replace `out` when it exists (default: refuse, so a kubeconfig is not lost without a word). */
  force?: boolean;
  signal?: AbortSignal;
}

export async function createUserKubeconfig(o: KubeconfigCreateOptions): Promise<{ csrName: string; out: string }> {
  if (!o.user || o.user.startsWith('system:')) throw new AgentError('ERR_INVALID_ARGUMENT', `--user must be a plain user name (got "${o.user}"); system: names belong to components`);
  if (o.groups.includes('system:masters')) throw new AgentError('ERR_INVALID_ARGUMENT', 'system:masters cannot be given to a user certificate; bind the cluster-admin ClusterRole instead');
  if (!Number.isInteger(o.days) || o.days < 1) throw new AgentError('ERR_INVALID_ARGUMENT', '--days must be a positive whole number');
  if (!o.force && existsSync(o.out)) throw new AgentError('ERR_ALREADY_EXISTS', `${o.out} exists; pass --force to replace it, or -o to write elsewhere`);
  const cfg = await loadKubeconfig(o.adminKubeconfig);
  if (!cfg.ca) throw new AgentError('ERR_FAILED_PRECONDITION', `${o.adminKubeconfig} has no certificate-authority-data; use the admin kubeconfig the server wrote`);
  const api = new ApiClient(cfg);
  try {
    const { keyPem, csrPem } = await generateKeyAndCsr({ commonName: o.user, organizations: o.groups });
    // Approved by us, as the admin (what `kubectl certificate approve` does), as soon as it exists.
    const { certPem, csrName } = await requestCertificate(api, {
      csrPem, signerName: SIGNER_KUBE_APISERVER_CLIENT, usages: ['digital signature', 'client auth'], generateName: `user-${o.user.toLowerCase().replace(/[^a-z0-9-]/g, '-')}-`,
      expirationSeconds: o.days * 86_400, timeoutMs: 60_000, pollMs: 200, signal: o.signal,
      onCreated: async (csr) => {
        const now = rfc3339(Date.now());
        const conditions = [{ type: 'Approved' as const, status: 'True' as const, reason: 'NodeletKubeconfigCreate', message: 'approved by nodelet kubeconfig create', lastUpdateTime: now }];
        await api.update(CERTIFICATESIGNINGREQUESTS, { ...csr, status: { conditions } }, { subresource: 'approval', signal: o.signal });
      },
    });
    await writeKubeconfig(o.out, { server: cfg.server, servers: cfg.servers, caData: cfg.ca, clientCertificateData: certPem, clientKeyData: keyPem, user: o.user, cluster: 'nodelet', context: `${o.user}@nodelet` });
    return { csrName, out: o.out };
  } finally {
    api.close();
  }
}
