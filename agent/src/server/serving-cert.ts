/**
 * The node API's serving certificate: the configured files (`tlsCertFile`/`tlsPrivateKeyFile`), or
 * a self-signed one generated once under `<root-dir>/pki/nodelet.{crt,key}` for the node name and
 * its addresses: served until the cluster signs one (certificates/serving-cert-manager.ts), or
 * always with serverTLSBootstrap off. The key file is written 0600.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { webcrypto } from 'node:crypto';
import { join } from 'node:path';
import { loadX509 } from '@nodelet/api/agent';

export interface ServingCert {
  cert: string;
  key: string;
}

export async function loadOrCreateServingCert(o: { certFile?: string; keyFile?: string; rootDir: string; nodeName: string; ips: string[] }): Promise<ServingCert> {
  if (o.certFile && o.keyFile) return { cert: await readFile(o.certFile, 'utf8'), key: await readFile(o.keyFile, 'utf8') };
  const dir = join(o.rootDir, 'pki');
  const certFile = join(dir, 'nodelet.crt');
  const keyFile = join(dir, 'nodelet.key');
  try {
    return { cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
  } catch {
    // not there yet
  }
  const x509 = await loadX509();
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: now.toString(16),
    name: `CN=${o.nodeName}@${Math.floor(now / 1000)}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 365 * 86_400_000),
    keys: keys as never,
    signingAlgorithm: alg,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: o.nodeName }, { type: 'dns', value: 'localhost' }, ...o.ips.map((ip) => ({ type: 'ip' as const, value: ip }))]),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const out = { cert: cert.toString('pem'), key: x509.PemConverter.encode(pkcs8, 'PRIVATE KEY') };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(keyFile, out.key, { mode: 0o600 });
  await writeFile(certFile, out.cert, { mode: 0o644 });
  return out;
}
