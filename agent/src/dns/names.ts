/**
 * Query names of the cluster zone and of the reverse zones, parsed as CoreDNS's kubernetes
 * plugin parses them (plugin/kubernetes/parse.go), plus the IP ↔ label conversions the records
 * use. Pure functions; names are compared lower-case and without the trailing dot.
 *
 *   _<port>._<proto>.<svc>.<ns>.svc.<zone>   SRV (and A) of a named port
 *   <endpoint>.<svc>.<ns>.svc.<zone>         one endpoint: its hostname, or its IP with dashes
 *   <svc>.<ns>.svc.<zone>                    the Service
 *   <ns>.svc.<zone>, svc.<zone>, <zone>      exist, hold no records (NODATA)
 *   <a-b-c-d>.<ns>.pod.<zone>                a pod IP
 */
import { isIP } from 'node:net';

/** What a name inside the cluster zone asks for. */
export type ClusterName =
  | { kind: 'apex' }
  | { kind: 'invalid' }
  | { kind: 'namespace'; scope: 'svc' | 'pod'; namespace: string }
  | { kind: 'svc'; namespace: string; service: string; endpoint?: string; port?: string; protocol?: string }
  | { kind: 'pod'; namespace: string; pod: string };

/** Lower-case, no trailing dot: the form every comparison uses. */
export function normalizeName(name: string): string {
  return name.replace(/\.+$/, '').toLowerCase();
}

/** True when `name` (normalised) is `zone` or below it. */
export function inZone(name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`);
}

const stripUnderscore = (s: string): string => (s.startsWith('_') ? s.slice(1) : s);

/** Parses a normalised name inside `zone` (CoreDNS parseRequest, single cluster, no zonal names). */
export function parseClusterName(name: string, zone: string): ClusterName {
  const base = name === zone ? '' : name.slice(0, -(zone.length + 1));
  if (base === '' || base === 'svc' || base === 'pod') return { kind: 'apex' };
  const segs = base.split('.');
  const scope = segs.pop();
  if (scope !== 'svc' && scope !== 'pod') return { kind: 'invalid' };
  const namespace = segs.pop()!;
  const service = segs.pop();
  if (service === undefined) return { kind: 'namespace', scope, namespace };
  // The kubernetes plugin reads a pod name in the service position and ignores an endpoint label.
  if (scope === 'pod') return segs.length <= 2 ? { kind: 'pod', namespace, pod: service } : { kind: 'invalid' };
  if (segs.length === 0) return { kind: 'svc', namespace, service };
  if (segs.length === 1) return { kind: 'svc', namespace, service, endpoint: segs[0]! };
  if (segs.length === 2) return { kind: 'svc', namespace, service, port: stripUnderscore(segs[0]!), protocol: stripUnderscore(segs[1]!) };
  return { kind: 'invalid' };
}

/** A comparable form of an IP address (IPv4 without leading zeros, IPv6 fully expanded), or undefined. */
export function ipKey(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 4) return ip.split('.').map(Number).join('.');
  if (family === 6) {
    const [addr = '', zone] = ip.split('%');
    return zone === undefined ? expandIPv6(addr) : `${expandIPv6(addr)}%${zone}`;
  }
  // CoreDNS strips leading zeros of IPv4 octets ("01.02.03.04"), which node:net refuses.
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) {
    const o = ip.split('.').map(Number);
    if (o.every((x) => x <= 255)) return o.join('.');
  }
  return undefined;
}

function expandIPv6(ip: string): string {
  let s = ip.toLowerCase();
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const o = v4[1]!.split('.').map(Number);
    s = s.slice(0, -v4[1]!.length) + `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.map((g) => g.padStart(4, '0')).join(':');
}

/**
 * The IP a reverse name stands for (`4.3.2.1.in-addr.arpa` → `1.2.3.4`, 32 nibbles under
 * `ip6.arpa` → an IPv6 key), or undefined when the name is not one whole address.
 */
export function reverseNameToIp(name: string): string | undefined {
  if (name.endsWith('.in-addr.arpa')) {
    const labels = name.slice(0, -'.in-addr.arpa'.length).split('.');
    if (labels.length !== 4 || !labels.every((l) => /^\d{1,3}$/.test(l) && Number(l) <= 255 && String(Number(l)) === l)) return undefined;
    return labels.reverse().join('.');
  }
  if (name.endsWith('.ip6.arpa')) {
    const nibbles = name.slice(0, -'.ip6.arpa'.length).split('.');
    if (nibbles.length !== 32 || !nibbles.every((n) => /^[0-9a-f]$/.test(n))) return undefined;
    const hex = nibbles.reverse().join('');
    return hex.match(/.{4}/g)!.join(':');
  }
  return undefined;
}

/** True for names under the reverse zones the plugin serves (kubeadm's `in-addr.arpa ip6.arpa`). */
export function isReverseName(name: string): boolean {
  return inZone(name, 'in-addr.arpa') || inZone(name, 'ip6.arpa');
}

/** An endpoint's label: its hostname, else its IP with dashes (CoreDNS endpointHostname). */
export function endpointLabel(ip: string, hostname: string | undefined): string {
  if (hostname) return hostname.toLowerCase();
  if (ip.includes('.')) return ip.replaceAll('.', '-');
  return ip.replaceAll(':', '-').toLowerCase();
}

/** The IP a pod label encodes (`10-244-1-5` → `10.244.1.5`; dashes for colons in IPv6), or undefined. */
export function podLabelToIp(label: string): string | undefined {
  const ip = (label.split('-').length === 4 && !label.includes('--')) ? label.replaceAll('-', '.') : label.replaceAll('-', ':');
  return isIP(ip) ? ip : undefined;
}
