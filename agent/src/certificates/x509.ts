/**
 * What the certificate managers need to know about a PEM certificate, from node's own X.509
 * parser: validity, subject alternative names, whether a key is its private half, whether a CA
 * signed it. No key material is copied or re-encoded.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { AgentError } from '@nodelet/base';

export interface CertificateInfo {
  /** Validity, epoch ms. */
  notBefore: number;
  notAfter: number;
  dnsNames: string[];
  /** Canonical form (see {@link canonicalIp}). */
  ips: string[];
}

/** The names a serving certificate is for. */
export interface ServingNames {
  dnsNames: readonly string[];
  ips: readonly string[];
}

/** `FD00:0:0:0:0:0:0:1` and `fd00::1` → `fd00::1`; IPv4 unchanged. */
export function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip.toLowerCase();
  }
}

/** Validity and names of the first (leaf) certificate of `certPem`. Throws ERR_INVALID_ARGUMENT when it does not parse. */
export function inspectCertificate(certPem: string): CertificateInfo {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'not a PEM X.509 certificate', { cause: err });
  }
  const sans = (cert.subjectAltName ?? '').split(', ').filter(Boolean);
  return {
    notBefore: Date.parse(cert.validFrom),
    notAfter: Date.parse(cert.validTo),
    dnsNames: sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4)),
    ips: sans.filter((s) => s.startsWith('IP Address:')).map((s) => canonicalIp(s.slice(11))),
  };
}

/** Why `keyPem` and `certPem` cannot be served together, or undefined when the key is the certificate's. */
export function pairProblem(certPem: string, keyPem: string): string | undefined {
  try {
    const cert = new X509Certificate(certPem);
    return cert.checkPrivateKey(createPrivateKey(keyPem)) ? undefined : 'the private key does not belong to the certificate';
  } catch (err) {
    return `not a PEM certificate and private key (${(err as Error).message})`;
  }
}

/** True when a certificate of `caPem` (a bundle) issued and signed the leaf of `certPem`. */
export function issuedBy(certPem: string, caPem: string): boolean {
  try {
    const leaf = new X509Certificate(certPem);
    return splitPem(caPem, 'CERTIFICATE').some((pem) => {
      const ca = new X509Certificate(pem);
      return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
    });
  } catch {
    return false;
  }
}

/** True when the certificate is for exactly these names (order and IP spelling aside). */
export function coversExactly(info: CertificateInfo, want: ServingNames): boolean {
  const same = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);
  return same([...new Set(info.dnsNames)], [...new Set(want.dnsNames)]) && same([...new Set(info.ips)], [...new Set(want.ips.map(canonicalIp))]);
}

/** The PEM blocks of `pem` whose label matches (`CERTIFICATE`, or a regexp for the key labels). */
export function splitPem(pem: string, label: string | RegExp): string[] {
  const out: string[] = [];
  for (const m of pem.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)) {
    if (typeof label === 'string' ? m[1] === label : label.test(m[1]!)) out.push(`${m[0]}\n`);
  }
  return out;
}
