/**
 * A hollow node's own credential: a client certificate for `system:node:<name>` in group
 * `system:nodes`, from the cluster's kubernetes.io/kube-apiserver-client-kubelet signer, so the
 * Node authorizer and NodeRestriction treat it as they treat a real node. The CSR is submitted and
 * approved with the admin kubeconfig (what `kubectl certificate approve` does); the key never
 * leaves the process.
 */
import { AgentError, hasCode } from '@nodelet/base';
import {
  ApiClient,
  CERTIFICATESIGNINGREQUESTS,
  generateKeyAndCsr,
  requestCertificate,
  rfc3339,
  SIGNER_KUBELET_CLIENT,
  type CertificateSigningRequest,
  type ResolvedKubeconfig,
} from '@nodelet/api/agent';

const APPROVE_ATTEMPTS = 5;

/**
 * Approves `csr` as the admin. The server's csrapproving controller approves a kubelet client CSR
 * of an admin too, and may write first: a conflict re-reads the CSR and is done once it is approved.
 */
async function approve(admin: ApiClient, first: CertificateSigningRequest, signal?: AbortSignal): Promise<void> {
  let csr = first;
  for (let attempt = 1; ; attempt++) {
    if (csr.status?.conditions?.some((c) => c.type === 'Approved' && c.status === 'True')) return;
    const conditions = [...(csr.status?.conditions ?? []), { type: 'Approved' as const, status: 'True' as const, reason: 'NodeletHollow', message: 'approved by nodelet hollow', lastUpdateTime: rfc3339(Date.now()) }];
    try {
      await admin.update(CERTIFICATESIGNINGREQUESTS, { ...csr, status: { ...csr.status, conditions } }, { subresource: 'approval', signal });
      return;
    } catch (err) {
      if (!hasCode(err, 'ERR_CONFLICT') || attempt >= APPROVE_ATTEMPTS) throw err;
      csr = await admin.get(CERTIFICATESIGNINGREQUESTS, csr.metadata.name!, { signal });
    }
  }
}

/** The transport a hollow node's ApiClient is made from: the admin's server and CA, the node's own certificate. */
export interface NodeCredential {
  server: string;
  ca?: string | Buffer;
  cert: string;
  key: string;
  insecureSkipTlsVerify?: boolean;
}

/**
 * Issues the credential of node `nodeName` through `admin` (an ApiClient with CSR create and
 * approve rights). Resolves once the certificate is signed; `signal` abandons the wait.
 */
export async function issueNodeCredential(admin: ApiClient, adminConfig: ResolvedKubeconfig, nodeName: string, signal?: AbortSignal): Promise<NodeCredential> {
  if (!adminConfig.ca && !adminConfig.insecureSkipTlsVerify && adminConfig.server.startsWith('https:')) {
    throw new AgentError('ERR_FAILED_PRECONDITION', 'the admin kubeconfig has no certificate-authority-data; use the one the server wrote');
  }
  const { keyPem, csrPem } = await generateKeyAndCsr({ commonName: `system:node:${nodeName}`, organizations: ['system:nodes'] });
  const { certPem } = await requestCertificate(admin, {
    csrPem,
    signerName: SIGNER_KUBELET_CLIENT,
    usages: ['digital signature', 'client auth'],
    generateName: `hollow-${nodeName}-`,
    timeoutMs: 60_000,
    pollMs: 100,
    signal,
    onCreated: (csr) => approve(admin, csr, signal),
  });
  return { server: adminConfig.server, ca: adminConfig.ca, cert: certPem, key: keyPem, insecureSkipTlsVerify: adminConfig.insecureSkipTlsVerify };
}
