/**
 * PKCS#10 requests on the server side: parse (with the request's own signature verified) and
 * sign with the cluster CA. The subject and SANs come from the request; key usages and the
 * lifetime from the CertificateSigningRequest (the signer decides, not the requester).
 */
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { LoadedCa } from './certs.js';

x509.cryptoProvider.set(webcrypto as never);

export interface ParsedCsr {
  commonName: string;
  organizations: string[];
  dnsNames: string[];
  ips: string[];
  /** Email and URI SANs (no Kubernetes signer issues these). */
  otherNames: string[];
  request: x509.Pkcs10CertificateRequest;
}

function attrs(name: x509.Name, type: string): string[] {
  const out: string[] = [];
  for (const rdn of name.toJSON()) for (const [k, v] of Object.entries(rdn)) if (k === type) out.push(...v);
  return out;
}

/** Parses a PEM (or DER) request; throws on malformed input or a bad self-signature. */
export async function parseCsr(pemOrDer: string | Uint8Array): Promise<ParsedCsr> {
  const request = new x509.Pkcs10CertificateRequest(typeof pemOrDer === 'string' ? pemOrDer : Buffer.from(pemOrDer));
  if (!(await request.verify())) throw new Error('the request signature does not verify');
  const name = new x509.Name(request.subject);
  const raw = request.getExtension('2.5.29.17'); // subjectAltName
  const names = raw ? new x509.SubjectAlternativeNameExtension(raw.rawData).names.toJSON() : [];
  return {
    commonName: attrs(name, 'CN')[0] ?? '',
    organizations: attrs(name, 'O'),
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    ips: names.filter((n) => n.type === 'ip').map((n) => n.value),
    otherNames: names.filter((n) => n.type !== 'dns' && n.type !== 'ip').map((n) => `${n.type}:${n.value}`),
    request,
  };
}

const USAGE_FLAGS: Record<string, number> = {
  'digital signature': x509.KeyUsageFlags.digitalSignature,
  'key encipherment': x509.KeyUsageFlags.keyEncipherment,
  'content commitment': x509.KeyUsageFlags.nonRepudiation,
  'key agreement': x509.KeyUsageFlags.keyAgreement,
  'data encipherment': x509.KeyUsageFlags.dataEncipherment,
};
const EXT_USAGES: Record<string, string> = { 'server auth': x509.ExtendedKeyUsage.serverAuth, 'client auth': x509.ExtendedKeyUsage.clientAuth };

/** Issues a certificate for `csr`, valid from 5 minutes ago (clock skew, as upstream backdates) to `notAfter`. */
export async function signCsr(ca: LoadedCa, csr: ParsedCsr, o: { usages: readonly string[]; now: number; notAfter: number }): Promise<string> {
  const keyUsage = o.usages.reduce((f, u) => f | (USAGE_FLAGS[u] ?? 0), 0);
  const ext = o.usages.map((u) => EXT_USAGES[u]).filter((u): u is string => !!u);
  const sans: x509.JsonGeneralName[] = [...csr.dnsNames.map((value) => ({ type: 'dns' as const, value })), ...csr.ips.map((value) => ({ type: 'ip' as const, value }))];
  const serial = randomBytes(16);
  serial[0] = serial[0]! & 0x7f;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial.toString('hex'),
    subject: csr.request.subject,
    issuer: ca.cert.subject,
    notBefore: new Date(o.now - 5 * 60_000),
    notAfter: new Date(Math.min(o.notAfter, ca.cert.notAfter.getTime())),
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    publicKey: csr.request.publicKey,
    signingKey: ca.key as never,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      ...(keyUsage ? [new x509.KeyUsagesExtension(keyUsage, true)] : []),
      ...(ext.length ? [new x509.ExtendedKeyUsageExtension(ext)] : []),
      ...(sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  return cert.toString('pem');
}
