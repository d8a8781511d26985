/**
 * The control plane's files under `<data-dir>/pki` (created at first start, keys 0600, certs 0644):
 *
 *   ca.crt, ca.key                              cluster CA (10 years)
 *   apiserver.crt, apiserver.key                serving cert: IP SANs 127.0.0.1 + host IPs, DNS localhost + hostname
 *   apiserver-kubelet-client.crt, .key          client cert the server shows agents (CN=system:kube-apiserver-kubelet-client,
 *                                               no group: bound to system:kubelet-api-admin only, so an agent
 *                                               address that leads back to a server gives nothing more)
 *   admin.crt, admin.key                        the admin kubeconfig's client cert (CN=kubernetes-admin, O=system:masters):
 *                                               signed by the cluster CA, so every server sharing the CA accepts it
 *
 * A leaf pair is (re-)issued, same CA, when it is missing, its key is not its certificate's (a
 * crash between the two renames of pair-files.ts), it is not signed by the CA, it expires within
 * `renewBeforeMs` (30 days), or (serving) a wanted SAN is missing. {@link ensurePki} runs at
 * start and, for rotation without restart, periodically (rotation.ts).
 */
import { mkdir } from 'node:fs/promises';
import { X509Certificate } from 'node:crypto';
import { hostname, networkInterfaces } from 'node:os';
import { AgentError, noopLogger, type Logger } from '@nodelet/base';
import { createCa, describeCertificate, issueCertificate, loadCa, type KeyPairPem, type LoadedCa } from './certs.js';
import { loadPair, writePairAtomic } from './pair-files.js';

/**
 * The user the server is towards agents (kube-apiserver's --kubelet-client-certificate): the
 * bootstrap policy binds it to system:kubelet-api-admin (auth/rbac/bootstrap-roles.ts).
 */
export const AGENT_CLIENT_USER = 'system:kube-apiserver-kubelet-client';

/** Re-issue a leaf certificate this long before it expires. */
export const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

export interface Pki {
  dir: string;
  caPem: string;
  serving: KeyPairPem;
  agentClient: KeyPairPem;
  /** The admin.kubeconfig credential (docs/security.md "The admin credential"). */
  admin: KeyPairPem;
}

export interface EnsurePkiOptions {
  dir: string;
  /** Extra SANs beyond 127.0.0.1, ::1, host IPs, localhost and the hostname. */
  extraIps?: readonly string[];
  extraDnsNames?: readonly string[];
  /** Time for expiry decisions and the validity of new certificates (default Date.now). */
  now?: () => number;
  /** Default {@link RENEW_BEFORE_MS}. */
  renewBeforeMs?: number;
  /**
   * Create the CA when its files are missing (default true). Rotation passes false: a new CA
   * while running would give clients that trust the old one a certificate they reject.
   */
  createCa?: boolean;
  logger?: Logger;
}

export function hostAddresses(): string[] {
  const out = new Set<string>(['127.0.0.1']);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' || a.family === 'IPv6') out.add(a.address.split('%')[0]!);
  return [...out];
}

/**
 * Loads the PKI under `opts.dir`, creating or re-issuing what is missing, mismatched or due
 * (see the file comment). Idempotent; one caller at a time per directory. A CA whose key is not
 * its certificate's is ERR_FAILED_PRECONDITION: replacing it would invalidate every credential
 * it signed, so a human decides.
 */
export async function ensurePki(opts: EnsurePkiOptions): Promise<Pki> {
  const dir = opts.dir;
  const now = opts.now ?? Date.now;
  const log = opts.logger ?? noopLogger;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const loadedCa = await loadPair(dir, 'ca');
  let caPair: KeyPairPem;
  if (loadedCa.status === 'ok') {
    caPair = loadedCa.pair;
  } else if (loadedCa.status === 'mismatch') {
    throw new AgentError('ERR_FAILED_PRECONDITION', `${dir}/ca.key does not belong to ${dir}/ca.crt (${loadedCa.why}); restore the CA pair, or remove both to start a new cluster CA`);
  } else if (opts.createCa === false) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `the cluster CA (${dir}/ca.crt, ca.key) is missing`);
  } else {
    caPair = await createCa('nodelet-ca', now());
    await writePairAtomic(dir, 'ca', caPair);
    log.info({ dir }, 'Created cluster CA');
  }
  const ca = await loadCa(caPair);
  const caKey = new X509Certificate(caPair.certPem).publicKey;
  const ips = [...new Set([...hostAddresses(), ...(opts.extraIps ?? [])])];
  const dnsNames = [...new Set(['localhost', hostname(), ...(opts.extraDnsNames ?? [])])];
  const leaf = { dir, ca, caKey, now, renewBeforeMs: opts.renewBeforeMs ?? RENEW_BEFORE_MS, log };
  const serving = await ensureLeaf(leaf, 'apiserver', { commonName: 'nodelet-apiserver', usage: 'server', ips, dnsNames }, (d) => {
    const missing = [...ips.filter((ip) => !d.ips.includes(ip)), ...dnsNames.filter((n) => !d.dnsNames.includes(n))];
    return missing.length ? `missing SANs ${missing.join(', ')}` : undefined;
  });
  // A certificate from before (CN=nodelet-apiserver, O=system:masters) is replaced at the next start.
  const agentClient = await ensureLeaf(leaf, 'apiserver-kubelet-client', { commonName: AGENT_CLIENT_USER, usage: 'client' }, (d) =>
    d.subject === `CN=${AGENT_CLIENT_USER}` ? undefined : `subject is "${d.subject}", wanted CN=${AGENT_CLIENT_USER} without groups`);
  // kubeadm's admin.conf subject before 1.29 (and its super-admin.conf's today): see docs/security.md.
  const admin = await ensureLeaf(leaf, 'admin', { commonName: 'kubernetes-admin', organization: 'system:masters', usage: 'client' });
  return { dir, caPem: caPair.certPem, serving, agentClient, admin };
}

interface LeafContext {
  dir: string;
  ca: LoadedCa;
  caKey: X509Certificate['publicKey'];
  now: () => number;
  renewBeforeMs: number;
  log: Logger;
}

/** The pair `<base>`, re-issued (and written atomically) when it is not fit to serve. */
async function ensureLeaf(c: LeafContext, base: string, want: Parameters<typeof issueCertificate>[1], extraCheck?: (cert: ReturnType<typeof describeCertificate>) => string | undefined): Promise<KeyPairPem> {
  const loaded = await loadPair(c.dir, base);
  let reason: string | undefined;
  if (loaded.status === 'missing') reason = 'missing';
  else if (loaded.status === 'mismatch') reason = `key and certificate do not match (${loaded.why})`;
  else {
    const d = describeCertificate(loaded.pair.certPem);
    if (!new X509Certificate(loaded.pair.certPem).verify(c.caKey)) reason = 'not signed by the cluster CA';
    else if (d.notAfter - c.now() < c.renewBeforeMs) reason = `expires ${new Date(d.notAfter).toISOString()}`;
    else reason = extraCheck?.(d);
    if (!reason) return loaded.pair;
  }
  const pair = await issueCertificate(c.ca, { ...want, now: c.now() });
  await writePairAtomic(c.dir, base, pair);
  c.log.info({ file: `${c.dir}/${base}.crt`, reason }, 'Issued certificate');
  return pair;
}
