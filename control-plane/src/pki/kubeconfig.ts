/** The admin kubeconfig and the in-process admin token under the data dir (both 0600, written atomically). */
import { readFile } from 'node:fs/promises';
import { randomTokenPart, writeFileAtomic, type KubeconfigSpec } from '@nodelet/api';

/** Reads `<path>`, or creates it with a new random token (64 chars of [a-z0-9]). */
export async function ensureToken(path: string): Promise<string> {
  try {
    const t = (await readFile(path, 'utf8')).trim();
    if (t) return t;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = randomTokenPart(64);
  await writeFileAtomic(path, token + '\n', 0o600);
  return token;
}

/**
 * What the server writes as `admin.kubeconfig` (with `writeKubeconfig` of @nodelet/api): its URL,
 * the cluster CA and the admin client certificate, as user `admin` in context `admin@nodelet`.
 */
export function adminKubeconfig(server: string, caPem: string, admin: { certPem: string; keyPem: string }): KubeconfigSpec {
  return { server, caData: caPem, clientCertificateData: admin.certPem, clientKeyData: admin.keyPem, user: 'admin', cluster: 'nodelet', context: 'admin@nodelet' };
}
