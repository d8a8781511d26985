/**
 * The control plane's files under `<data-dir>/pki` (created at first start, keys 0600):
 *
 *   ca.crt, ca.key                              cluster CA (10 years)
 *   apiserver.crt, apiserver.key                serving cert: IP SANs 127.0.0.1 + host IPs, DNS localhost + hostname
 *   apiserver-kubelet-client.crt, .key          client cert the server shows agents (CN=nodelet-apiserver, O=system:masters)
 *
 * The serving cert is re-issued (same CA) when a wanted SAN is missing or it expires within 30 days.
 */
import { mkdir, readFile, writeFile, chmod } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { createCa, describeCertificate, issueCertificate, loadCa, type KeyPairPem } from './certs.js';

export interface Pki {
  dir: string;
  caPem: string;
  serving: KeyPairPem;
  agentClient: KeyPairPem;
}

export interface EnsurePkiOptions {
  dir: string;
  /** Extra SANs beyond 127.0.0.1, ::1, host IPs, localhost and the hostname. */
  extraIps?: readonly string[];
  extraDnsNames?: readonly string[];
}

export function hostAddresses(): string[] {
  const out = new Set<string>(['127.0.0.1']);
  for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) if (a.family === 'IPv4' || a.family === 'IPv6') out.add(a.address.split('%')[0]!);
  return [...out];
}

async function readPair(dir: string, base: string): Promise<KeyPairPem | undefined> {
  try {
    return { certPem: await readFile(join(dir, `${base}.crt`), 'utf8'), keyPem: await readFile(join(dir, `${base}.key`), 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function writePair(dir: string, base: string, pair: KeyPairPem): Promise<void> {
  // Key first and 0600 from the start: never a readable key on disk, not even briefly.
  await writeFile(join(dir, `${base}.key`), pair.keyPem, { mode: 0o600 });
  await chmod(join(dir, `${base}.key`), 0o600);
  await writeFile(join(dir, `${base}.crt`), pair.certPem, { mode: 0o644 });
}

export async function ensurePki(opts: EnsurePkiOptions): Promise<Pki> {
  const dir = opts.dir;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let caPair = await readPair(dir, 'ca');
  if (!caPair) {
    caPair = await createCa('nodelet-ca');
    await writePair(dir, 'ca', caPair);
  }
  const ca = await loadCa(caPair);
  const ips = [...new Set([...hostAddresses(), ...(opts.extraIps ?? [])])];
  const dnsNames = [...new Set(['localhost', hostname(), ...(opts.extraDnsNames ?? [])])];
  let serving = await readPair(dir, 'apiserver');
  if (serving) {
    const d = describeCertificate(serving.certPem);
    const missing = ips.some((ip) => !d.ips.includes(ip)) || dnsNames.some((n) => !d.dnsNames.includes(n));
    if (missing || d.notAfter < Date.now() + 30 * 24 * 3600 * 1000) serving = undefined;
  }
  if (!serving) {
    serving = await issueCertificate(ca, { commonName: 'nodelet-apiserver', usage: 'server', ips, dnsNames });
    await writePair(dir, 'apiserver', serving);
  }
  let agentClient = await readPair(dir, 'apiserver-kubelet-client');
  if (!agentClient || describeCertificate(agentClient.certPem).notAfter < Date.now() + 30 * 24 * 3600 * 1000) {
    agentClient = await issueCertificate(ca, { commonName: 'nodelet-apiserver', organization: 'system:masters', usage: 'client' });
    await writePair(dir, 'apiserver-kubelet-client', agentClient);
  }
  return { dir, caPem: caPair.certPem, serving, agentClient };
}
