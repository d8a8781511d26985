/**
 * What an admin does with `kubectl certificate approve` for a node's serving certificate, for
 * tools that run as the admin and know the node's names themselves (`nodelet lab up` starts the
 * agent on this machine with the address it chose): approve the node's pending
 * `kubernetes.io/kubelet-serving` requests whose every name and address the caller vouches for.
 * The cluster's approver gives a node only its Node name and renewals unasked
 * (control-plane/src/controllers/certificates/serving-names.ts), so an agent's first
 * certificate, which names its IP, needs this or an admin.
 */
import { rfc3339 } from '../time.js';
import type { ApiClient } from '../client/api-client.js';
import { SIGNER_KUBELET_SERVING, type CertificateSigningRequest } from '../types/certificates.js';
import { CERTIFICATESIGNINGREQUESTS } from '../types/resources.js';
import { loadX509 } from './x509-lazy.js';

export interface ApproveNodeServingOptions {
  nodeName: string;
  /** DNS names and IPs the caller knows to be the node's; a request naming anything else is left pending. */
  dnsNames: readonly string[];
  ips: readonly string[];
  /** The Approved condition's reason, e.g. `NodeletLabUp`. */
  reason: string;
  signal?: AbortSignal;
}

/** Approves the matching pending requests; resolves with their names. */
export async function approveNodeServingCsrs(api: ApiClient, o: ApproveNodeServingOptions): Promise<string[]> {
  const x509 = await loadX509();
  const approved: string[] = [];
  for (const csr of (await api.list(CERTIFICATESIGNINGREQUESTS, { signal: o.signal })).items) {
    if (csr.spec.signerName !== SIGNER_KUBELET_SERVING || csr.spec.username !== `system:node:${o.nodeName}` || !pending(csr)) continue;
    const req = new x509.Pkcs10CertificateRequest(Buffer.from(csr.spec.request, 'base64').toString('utf8'));
    if (req.subject !== `CN=system:node:${o.nodeName}, O=system:nodes`) continue;
    const raw = req.getExtension('2.5.29.17'); // subjectAltName
    const names = raw ? new x509.SubjectAlternativeNameExtension(raw.rawData).names.toJSON() : [];
    const vouched = names.every((n) => (n.type === 'dns' && o.dnsNames.includes(n.value)) || (n.type === 'ip' && o.ips.includes(n.value)));
    if (!names.length || !vouched) continue;
    const now = rfc3339(Date.now());
    const conditions = [...(csr.status?.conditions ?? []), { type: 'Approved' as const, status: 'True' as const, reason: o.reason, message: `every name and address is node "${o.nodeName}"'s`, lastUpdateTime: now }];
    await api.update(CERTIFICATESIGNINGREQUESTS, { ...csr, status: { ...csr.status, conditions } }, { subresource: 'approval', signal: o.signal });
    approved.push(csr.metadata.name!);
  }
  return approved;
}

const pending = (csr: CertificateSigningRequest): boolean =>
  !csr.status?.certificate && !csr.status?.conditions?.some((c) => (c.type === 'Approved' || c.type === 'Denied' || c.type === 'Failed') && c.status === 'True');
