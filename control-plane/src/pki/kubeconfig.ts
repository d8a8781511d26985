/** Admin kubeconfig (and the in-process admin token) files under the data dir (both 0600). */
import { readFile, writeFile, chmod } from 'node:fs/promises';
import YAML from 'yaml';
import { randomTokenPart } from '@nodelet/api';

/** Reads `<path>`, or creates it with a new random token (64 chars of [a-z0-9]). */
export async function ensureToken(path: string): Promise<string> {
  try {
    const t = (await readFile(path, 'utf8')).trim();
    if (t) return t;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const token = randomTokenPart(64);
  await writeFile(path, token + '\n', { mode: 0o600 });
  await chmod(path, 0o600);
  return token;
}

/** A kubeconfig for one server whose user logs in with a bearer token or a client certificate. */
export function renderKubeconfig(o: { server: string; caPem: string; token?: string; client?: { certPem: string; keyPem: string }; user?: string; cluster?: string }): string {
  const cluster = o.cluster ?? 'nodelet';
  const user = o.user ?? 'admin';
  const credential = o.client
    ? { 'client-certificate-data': Buffer.from(o.client.certPem).toString('base64'), 'client-key-data': Buffer.from(o.client.keyPem).toString('base64') }
    : { token: o.token };
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: o.server, 'certificate-authority-data': Buffer.from(o.caPem).toString('base64') } }],
    users: [{ name: user, user: credential }],
    contexts: [{ name: `${user}@${cluster}`, context: { cluster, user } }],
    'current-context': `${user}@${cluster}`,
    preferences: {},
  });
}

export async function writeKubeconfig(path: string, content: string): Promise<void> {
  await writeFile(path, content, { mode: 0o600 });
  await chmod(path, 0o600);
}
