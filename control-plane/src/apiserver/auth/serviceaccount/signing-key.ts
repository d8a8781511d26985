/**
 * The service-account token signing key (kube-apiserver's `--service-account-signing-key-file`):
 * an ECDSA P-256 key in `<pki-dir>/sa.key` (PKCS#8 PEM, 0600), created once and written
 * atomically (temp file, fsync, rename). Tokens carry its key ID (`kid`): the base64url SHA-256
 * of the DER public key, as upstream computes it, so verifiers pick the key from the JWKS.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '@nodelet/api';
import { join } from 'node:path';

export interface ServiceAccountKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  kid: string;
  /** The JWS algorithm for this key. */
  alg: 'ES256';
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('base64url');
}

export async function ensureServiceAccountKey(pkiDir: string): Promise<ServiceAccountKey> {
  const file = join(pkiDir, 'sa.key');
  let pem: string;
  try {
    pem = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    await writeFileAtomic(file, pem, 0o600);
  }
  const privateKey = createPrivateKey(pem);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, kid: keyIdOf(publicKey), alg: 'ES256' };
}
