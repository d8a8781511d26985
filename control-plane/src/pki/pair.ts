/**
 * Checks on a PEM certificate and private key taken together, shared by the PKI files
 * (pki.ts, pair-files.ts) and the etcd client flags (storage/etcd/etcd-tls.ts). Node's own
 * X.509 parser does the work: no key material is copied or re-encoded.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';

/**
 * Why `certPem` and `keyPem` cannot be used together, or undefined when the key is the private
 * half of the certificate's public key. A chain is accepted: the first certificate is the leaf.
 */
export function pairMismatch(certPem: string | Buffer, keyPem: string | Buffer): string | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    return `the certificate is not a PEM X.509 certificate (${(err as Error).message})`;
  }
  let key;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    return `the key is not a PEM private key (${(err as Error).message})`;
  }
  return cert.checkPrivateKey(key) ? undefined : 'the private key does not belong to the certificate (public keys differ)';
}
