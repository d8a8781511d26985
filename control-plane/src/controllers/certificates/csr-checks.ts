/**
 * What a kubelet client or serving certificate request must look like (upstream
 * pkg/apis/certificates IsKubeletClientCSR / IsKubeletServingCSR), shared by the approvers and
 * the signer. Pure functions over a parsed request; each returns why not, or undefined.
 */
import type { CertificateSigningRequest } from '@nodelet/api';
import type { ParsedCsr } from '../../pki/csr.js';

export const NODE_USER_PREFIX = 'system:node:';

const subset = (xs: readonly string[], allowed: readonly string[]): boolean => xs.every((x) => allowed.includes(x));

function nodeSubjectProblem(csr: ParsedCsr): string | undefined {
  if (csr.organizations.length !== 1 || csr.organizations[0] !== 'system:nodes') return 'subject organization must be exactly "system:nodes"';
  if (!csr.commonName.startsWith(NODE_USER_PREFIX) || csr.commonName.length === NODE_USER_PREFIX.length) return 'subject common name must be "system:node:<node name>"';
  return undefined;
}

/** A kubelet client certificate: system:node:<n>/system:nodes, client auth, no SANs. */
export function kubeletClientProblem(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  const subject = nodeSubjectProblem(csr);
  if (subject) return subject;
  if (csr.dnsNames.length || csr.ips.length || csr.otherNames.length) return 'a kubelet client certificate may not have subject alternative names';
  if (!usages.includes('client auth') || !subset(usages, ['digital signature', 'key encipherment', 'client auth'])) {
    return 'usages must be "client auth" with "digital signature" and optionally "key encipherment"';
  }
  return undefined;
}

/** A kubelet serving certificate: system:node:<n>/system:nodes, server auth, at least one DNS/IP SAN and nothing else. */
export function kubeletServingProblem(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  const subject = nodeSubjectProblem(csr);
  if (subject) return subject;
  if (csr.dnsNames.length + csr.ips.length === 0) return 'a kubelet serving certificate needs at least one DNS or IP subject alternative name';
  if (csr.otherNames.length) return 'a kubelet serving certificate may only have DNS and IP subject alternative names';
  if (!usages.includes('server auth') || !subset(usages, ['digital signature', 'key encipherment', 'server auth'])) {
    return 'usages must be "server auth" with "digital signature" and optionally "key encipherment"';
  }
  return undefined;
}

/** A client certificate for the API server (kubectl users): client auth only. */
export function apiserverClientProblem(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  if (!csr.commonName) return 'subject common name (the user name) is required';
  if (csr.organizations.includes('system:masters')) return 'the system:masters group may not be issued by this signer';
  if (!usages.includes('client auth') || !subset(usages, ['digital signature', 'key encipherment', 'client auth'])) {
    return 'usages must be "client auth" with "digital signature" and optionally "key encipherment"';
  }
  return undefined;
}

export type CsrState = 'pending' | 'approved' | 'denied' | 'failed' | 'issued';

export function csrState(csr: CertificateSigningRequest): CsrState {
  const has = (t: string): boolean => !!csr.status?.conditions?.some((c) => c.type === t && c.status === 'True');
  if (has('Failed')) return 'failed';
  if (has('Denied')) return 'denied';
  if (csr.status?.certificate) return 'issued';
  if (has('Approved')) return 'approved';
  return 'pending';
}
