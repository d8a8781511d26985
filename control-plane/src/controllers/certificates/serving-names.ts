/**
 * Which names in a kubelet serving certificate request the approver may vouch for without an
 * admin (approver.ts). A node writes its own Node status, so the addresses it reports prove
 * nothing: what it can be given unasked is only what it cannot choose.
 *
 *   its Node name             fixed by its credential (system:node:<name>) — unless the name
 *                             looks like a Service's or loopback's (a bootstrap token not tied to
 *                             a name lets the joining machine pick it)
 *   names of its current      a renewal: every name and address of the request is in the
 *   certificate               certificate the node's agent serves at that address now, issued by
 *                             the cluster CA to this node (so an admin, or this rule, approved
 *                             them before); checked by dialling each IP of the request
 *   never                     Service names (kubernetes, *.svc, *.svc.<domain>), localhost,
 *                             Service cluster IPs, and addresses that are not global unicast
 *                             (loopback, link-local, multicast, unspecified)
 *
 * Everything else waits for `kubectl certificate approve`.
 */
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { isGlobalUnicast } from '../../apiserver/handlers/proxy-target.js';

/** A name a Service or the loopback interface answers to: never given to a node unasked. */
export function isReservedName(name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  return n === 'localhost' || n.endsWith('.localhost') || n === 'kubernetes' || n.startsWith('kubernetes.default') || n.endsWith('.svc') || n.includes('.svc.');
}

/** Why an IP of a request is never approved unasked, or undefined. */
export function reservedIpProblem(ip: string, serviceIps: ReadonlySet<string>): string | undefined {
  if (!isGlobalUnicast(ip)) return 'not a global unicast address';
  if (serviceIps.has(ip)) return 'a Service cluster IP';
  return undefined;
}

export interface ServedCertificate {
  commonName: string;
  dnsNames: string[];
  ips: string[];
}

/**
 * The certificate served at `ip:port`, verified against `ca` and for `ip` (an IP SAN), or
 * undefined when there is none that verifies. Only the TLS handshake: no request is sent.
 */
export function servedCertificate(ip: string, port: number, ca: string, timeoutMs = 5000): Promise<ServedCertificate | undefined> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: ip, port, ca, timeout: timeoutMs }, () => {
      const raw = socket.getPeerCertificate().raw;
      socket.destroy();
      const cert = new X509Certificate(raw);
      const sans = (cert.subjectAltName ?? '').split(', ').filter(Boolean);
      resolve({
        commonName: /^CN=(.*)$/m.exec(cert.subject)?.[1] ?? '',
        dnsNames: sans.filter((s) => s.startsWith('DNS:')).map((s) => s.slice(4)),
        ips: sans.filter((s) => s.startsWith('IP Address:')).map((s) => normalizeIp(s.slice(11))),
      });
    });
    // Not reachable, not TLS, or not a certificate of this CA for this address: no renewal.
    socket.once('error', () => resolve(undefined));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(undefined);
    });
  });
}

/** OpenSSL prints IPv6 SANs uncompressed in upper case; compare them as the CSR spells them. */
function normalizeIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
}
