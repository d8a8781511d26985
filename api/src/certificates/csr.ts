/**
 * The client half of certificates.k8s.io: make a key and a PKCS#10 request, submit it as a
 * CertificateSigningRequest, wait for the signer's certificate (kubelet's certificate manager
 * and `kubectl certificate`'s counterpart). Keys are ECDSA P-256 and never leave the caller.
 *
 *   generateKeyAndCsr ─▶ create CSR ─▶ (approver approves, signer signs) ─▶ status.certificate
 *                                     └▶ Denied / Failed condition → ERR_PERMISSION_DENIED / ERR_FAILED_PRECONDITION
 */
import { webcrypto } from 'node:crypto';
import type * as X509 from '@peculiar/x509';
import { AgentError, delay } from '@nodelet/base';
import type { ApiClient } from '../client/api-client.js';
import type { CertificateSigningRequest, KeyUsage } from '../types/certificates.js';
import { CERTIFICATESIGNINGREQUESTS } from '../types/resources.js';
import { loadX509 } from './x509-lazy.js';

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

export interface CsrSubject {
  commonName: string;
  organizations?: readonly string[];
  dnsNames?: readonly string[];
  ips?: readonly string[];
}

/** A new private key (PKCS#8 PEM) and a PEM certificate request for it. */
export async function generateKeyAndCsr(s: CsrSubject): Promise<{ keyPem: string; csrPem: string }> {
  const x509 = await loadX509();
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const rdn = (v: string): string => v.replace(/([,+"\\<>;=])/g, '\\$1');
  const name = [`CN=${rdn(s.commonName)}`, ...(s.organizations ?? []).map((o) => `O=${rdn(o)}`)].join(', ');
  const sans: X509.JsonGeneralName[] = [...(s.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })), ...(s.ips ?? []).map((value) => ({ type: 'ip' as const, value }))];
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name,
    keys: keys as never,
    signingAlgorithm: ALG,
    extensions: sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : [],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { keyPem: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY'), csrPem: csr.toString('pem') };
}

export interface RequestCertificateOptions {
  csrPem: string;
  signerName: string;
  usages: KeyUsage[];
  /** CSR object name (default: generated from `generateName`). */
  generateName?: string;
  expirationSeconds?: number;
  /** How long to wait for approval and signing (default 5 min). */
  timeoutMs?: number;
  /** The longest wait between two reads of the CSR (default 500 ms); the first come sooner (100 ms, doubling), as an approver that runs beside the requester answers in well under a second. */
  pollMs?: number;
  signal?: AbortSignal;
  /** Called once the CSR exists (e.g. to approve it when the caller may). */
  onCreated?: (csr: CertificateSigningRequest) => Promise<void>;
}

/** Submits a CSR and resolves with the issued PEM certificate (chain as the signer wrote it). */
export async function requestCertificate(api: ApiClient, o: RequestCertificateOptions): Promise<{ certPem: string; csrName: string }> {
  const created = await api.create(CERTIFICATESIGNINGREQUESTS, {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { generateName: o.generateName ?? 'csr-' },
    spec: { request: Buffer.from(o.csrPem).toString('base64'), signerName: o.signerName, usages: o.usages, ...(o.expirationSeconds ? { expirationSeconds: o.expirationSeconds } : {}) },
  }, { signal: o.signal });
  const name = created.metadata.name!;
  await o.onCreated?.(created);
  const deadline = Date.now() + (o.timeoutMs ?? 300_000);
  const maxPollMs = o.pollMs ?? 500;
  let pollMs = Math.min(100, maxPollMs);
  for (;;) {
    const csr: CertificateSigningRequest = await api.get(CERTIFICATESIGNINGREQUESTS, name, { signal: o.signal });
    const cond = (t: string) => csr.status?.conditions?.find((c) => c.type === t && c.status === 'True');
    const denied = cond('Denied');
    if (denied) throw new AgentError('ERR_PERMISSION_DENIED', `certificate signing request "${name}" was denied: ${denied.reason ?? ''} ${denied.message ?? ''}`.trim());
    const failed = cond('Failed');
    if (failed) throw new AgentError('ERR_FAILED_PRECONDITION', `certificate signing request "${name}" failed: ${failed.reason ?? ''} ${failed.message ?? ''}`.trim());
    if (csr.status?.certificate) return { certPem: Buffer.from(csr.status.certificate, 'base64').toString('utf8'), csrName: name };
    if (Date.now() > deadline) {
      throw new AgentError('ERR_DEADLINE_EXCEEDED', `certificate signing request "${name}" was not ${cond('Approved') ? 'signed' : 'approved'} in time: approve it with \`kubectl certificate approve ${name}\``);
    }
    await delay(pollMs, o.signal);
    pollMs = Math.min(pollMs * 2, maxPollMs);
  }
}
