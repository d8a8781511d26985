/**
 * X.509 material of the control plane, made with @peculiar/x509 on node's WebCrypto: an ECDSA
 * P-256 CA, server certificates (serverAuth, IP/DNS SANs) and client certificates (clientAuth).
 * Pure in-memory; see pki.ts for the files on disk.
 */
// @peculiar/x509 resolves its services through tsyringe, which needs a Reflect metadata polyfill.
import 'reflect-metadata';
import { randomBytes, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as never);

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 3600 * 1000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface LoadedCa {
  cert: x509.X509Certificate;
  key: CryptoKey;
  certPem: string;
}

function serial(): string {
  const b = randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString('hex');
}

async function exportKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

async function newKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

export async function createCa(commonName: string, now = Date.now(), years = 10): Promise<KeyPairPem> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${commonName}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + years * 365 * DAY),
    signingAlgorithm: ALG,
    keys: keys as never,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey as never),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKeyPem(keys.privateKey) };
}

export async function loadCa(pair: KeyPairPem): Promise<LoadedCa> {
  const cert = new x509.X509Certificate(pair.certPem);
  const der = x509.PemConverter.decode(pair.keyPem)[0];
  if (!der) throw new Error('CA key PEM holds no key');
  const key = await webcrypto.subtle.importKey('pkcs8', der, ALG, true, ['sign']);
  return { cert, key, certPem: pair.certPem };
}

export interface LeafOptions {
  commonName: string;
  organization?: string;
  /** `peer`: both server and client auth, for an etcd member that listens for and dials its peers. */
  usage: 'server' | 'client' | 'peer';
  ips?: readonly string[];
  dnsNames?: readonly string[];
  now?: number;
  days?: number;
}

const EXT_KEY_USAGES: Record<LeafOptions['usage'], string[]> = {
  server: [x509.ExtendedKeyUsage.serverAuth],
  client: [x509.ExtendedKeyUsage.clientAuth],
  peer: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
};

export async function issueCertificate(ca: LoadedCa, o: LeafOptions): Promise<KeyPairPem> {
  const now = o.now ?? Date.now();
  const keys = await newKeys();
  const sans: x509.JsonGeneralName[] = [
    ...(o.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(o.ips ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `CN=${o.commonName}${o.organization ? `, O=${o.organization}` : ''}`,
    issuer: ca.cert.subject,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + (o.days ?? 365) * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey as never,
    signingKey: ca.key as never,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension(EXT_KEY_USAGES[o.usage]),
      ...(sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await exportKeyPem(keys.privateKey) };
}

/** SANs and expiry of a PEM certificate (to decide whether to re-issue it). */
export function describeCertificate(pem: string): { subject: string; ips: string[]; dnsNames: string[]; notAfter: number } {
  const cert = new x509.X509Certificate(pem);
  const san = cert.getExtension(x509.SubjectAlternativeNameExtension);
  const names = san?.names.toJSON() ?? [];
  return {
    subject: cert.subject,
    ips: names.filter((n) => n.type === 'ip').map((n) => n.value),
    dnsNames: names.filter((n) => n.type === 'dns').map((n) => n.value),
    notAfter: cert.notAfter.getTime(),
  };
}
