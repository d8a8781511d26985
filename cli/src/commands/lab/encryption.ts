/**
 * The lab encrypts Secrets at rest (docs/security.md): at its first start it writes an
 * EncryptionConfiguration with a fresh random AES-CBC key into the server's data dir (0600, as it
 * holds the key) and `nodelet server` gets `--encryption-provider-config` for it. Later starts
 * keep the file, so Secrets written earlier stay readable.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';

/** Where the lab keeps it: `<server data dir>/encryption-config.yaml`. */
export const labEncryptionConfigPath = (serverDir: string): string => join(serverDir, 'encryption-config.yaml');

/**
 * Writes the lab's EncryptionConfiguration unless it exists; returns its path. `identity` comes
 * last so Secrets of a lab state dir from before encryption still read (and move to the key when
 * rewritten).
 */
export function ensureLabEncryptionConfig(serverDir: string): string {
  const path = labEncryptionConfigPath(serverDir);
  if (existsSync(path)) return path;
  mkdirSync(serverDir, { recursive: true, mode: 0o700 });
  const doc = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'EncryptionConfiguration',
    resources: [{
      resources: ['secrets'],
      providers: [{ aescbc: { keys: [{ name: `lab-${new Date().toISOString().slice(0, 10)}`, secret: randomBytes(32).toString('base64') }] } }, { identity: {} }],
    }],
  };
  // 'wx': never overwrite a key another start wrote meanwhile (that would orphan its Secrets).
  writeFileSync(path, toYaml(doc), { mode: 0o600, flag: 'wx' });
  return path;
}
