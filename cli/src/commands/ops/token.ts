/**
 * `nodelet token create [--ttl 24h] [--node-name <n>]` on the control-plane machine: creates a bootstrap token
 * through the API (as admin) and prints the join command for it, with the CA pin.
 * `nodelet token list` shows the live tokens (IDs, expiry); `nodelet token delete <id>` revokes one.
 */
import { readFileSync } from 'node:fs';
import { ApiClient, loadKubeconfig, newBootstrapToken, SECRETS, BOOTSTRAP_SECRET_TYPE } from '@nodelet/api';
import { AgentError, parseDuration } from '@nodelet/base';
import { spkiHash } from './ca-pin.js';
import { X509Certificate } from 'node:crypto';

export const DEFAULT_ADMIN_KUBECONFIG = '/var/lib/nodelet/server/admin.kubeconfig';

/** The admin kubeconfig when --kubeconfig is not given: $KUBECONFIG's first file (as kubectl reads it), else the server's. */
export function defaultAdminKubeconfig(env: NodeJS.ProcessEnv = process.env): string {
  return env.KUBECONFIG?.split(':').find((p) => p.length > 0) ?? DEFAULT_ADMIN_KUBECONFIG;
}

/** "90s", "15m", "24h0m0s" (a Go duration, as kubeadm's --ttl) or, beyond Go, whole days "7d" → ms. */
export function parseTtl(s: string): number {
  const days = /^(\d+)d$/.exec(s.trim());
  let ms: number;
  try {
    ms = days ? Number(days[1]) * 86_400_000 : parseDuration(s, { bare: 'reject' });
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `--ttl must look like 30m, 24h or 7d, got "${s}"`, { cause: err });
  }
  if (ms <= 0) throw new AgentError('ERR_INVALID_ARGUMENT', '--ttl must be positive');
  return ms;
}

export interface CreatedToken {
  token: string;
  expiresAt: string;
  caCertHash: string;
  server: string;
  joinCommand: string;
}

/**
 * `nodeName`: the token may join only that node — and may re-join it when a Node of that name
 * already exists (the admin's approval; a token without a name cannot take over an existing node).
 */
export async function createToken(o: { kubeconfig: string; ttlMs: number; description?: string; nodeName?: string; signal?: AbortSignal; now?: number }): Promise<CreatedToken> {
  const cfg = await loadKubeconfig(o.kubeconfig);
  if (!cfg.ca) throw new AgentError('ERR_FAILED_PRECONDITION', `${o.kubeconfig} has no certificate-authority-data; use the admin kubeconfig the server wrote`);
  const client = new ApiClient(cfg);
  const expiresAt = (o.now ?? Date.now()) + o.ttlMs;
  const { token, secret } = newBootstrapToken(expiresAt, o.description, o.nodeName);
  await client.create(SECRETS, secret as never, { signal: o.signal });
  const caCertHash = spkiHash(new X509Certificate(cfg.ca));
  return {
    token,
    expiresAt: new Date(expiresAt).toISOString(),
    caCertHash,
    server: cfg.server,
    joinCommand: `nodelet join ${cfg.server} --token ${token} --ca-cert-hash ${caCertHash}`,
  };
}

export async function listTokens(o: { kubeconfig: string; signal?: AbortSignal }): Promise<Array<{ id: string; expires: string; description: string }>> {
  const client = new ApiClient(await loadKubeconfig(o.kubeconfig));
  const list = await client.list(SECRETS, { namespace: 'kube-system', fieldSelector: `type=${BOOTSTRAP_SECRET_TYPE}`, signal: o.signal });
  const dec = (v?: string) => (v ? Buffer.from(v, 'base64').toString('utf8') : '');
  return list.items
    .filter((s) => s.type === BOOTSTRAP_SECRET_TYPE)
    .map((s) => ({ id: dec(s.data?.['token-id']), expires: dec(s.data?.expiration), description: dec(s.data?.description) }));
}

export function readCaFromKubeconfigFile(path: string): string {
  return readFileSync(path, 'utf8');
}
