/**
 * The records of the cluster zone, computed from a {@link ClusterView} the way CoreDNS's
 * kubernetes plugin computes them (plugin/kubernetes/kubernetes.go findServices/findPods,
 * reverse.go, plugin/backend_lookup.go A/AAAA/SRV/PTR/CNAME, handler.go for NXDOMAIN vs NODATA):
 *
 *   - ClusterIP Service: one A/AAAA per cluster IP; SRV per (matching) port → `<svc>.<ns>.svc.<zone>`.
 *   - headless Service: one A per published endpoint; SRV targets `<hostname-or-a-b-c-d>.<svc>.<ns>.svc.<zone>`
 *     with the targets' A records in the additional section; no published endpoint → NXDOMAIN.
 *   - `<endpoint>.<svc>.<ns>.svc.<zone>`: the endpoints of any non-ExternalName Service with that label.
 *   - ExternalName: a CNAME; for A/AAAA the target is resolved too (inside the zone here, outside by
 *     the caller through the forwarder: {@link LocalAnswer.chase}); never SRV.
 *   - `<a-b-c-d>.<ns>.pod.<zone>`: the IP (`insecure`, kubeadm's Corefile), only when a pod in that
 *     namespace holds it (`verified`), or nothing (`disabled`).
 *   - PTR of a cluster IP → the Service name; of an endpoint IP → the endpoint name.
 *   - A name that does not exist is NXDOMAIN, a name that exists without records of the type is
 *     NOERROR/NODATA; both carry the zone's SOA in the authority section.
 *
 * TTLs: `ttl` on records (kubeadm's Corefile says `ttl 30`); negative answers use `negativeTTL`
 * for the SOA's TTL and MINIMUM (nodelet keeps that short, 5 s, so a Service created right after
 * a failed lookup resolves soon; CoreDNS uses its one `ttl` for both). Pure: no I/O, no clock.
 */
import { isIP } from 'node:net';
import type { Answer, SoaAnswer } from 'dns-packet';
import { clusterIPsOf, isHeadless, type ClusterView } from './cluster-index.js';
import { endpointLabel, inZone, parseClusterName, podLabelToIp, reverseNameToIp, type ClusterName } from './names.js';

export type PodRecords = 'insecure' | 'verified' | 'disabled';

export interface ZoneOptions {
  /** The cluster domain, normalised (`cluster.local`). */
  zone: string;
  ttl: number;
  negativeTTL: number;
  podRecords: PodRecords;
  /** Addresses of `ns.dns.<zone>` (the kube-dns Service IPs). */
  nameservers: readonly string[];
}

export type Rcode = 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED';

export interface LocalAnswer {
  rcode: Rcode;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  /**
   * An ExternalName target outside the zone: the caller resolves `target`/`type` upstream and
   * answers `cname` followed by what it found; when that lookup fails the CNAME is left out too
   * (CoreDNS backend_lookup.go).
   */
  chase?: { cname: Answer; target: string; type: 'A' | 'AAAA' };
}

/** The schema version the kubernetes plugin publishes at `dns-version.<zone>` TXT. */
export const DNS_SCHEMA_VERSION = '1.1.0';
const MAX_CNAME_CHAIN = 8;

interface Entry {
  /** An IP, or a name for ExternalName. */
  host: string;
  /** -1 when the endpoints declare no port. */
  port: number;
  /** The owner name SRV targets use. */
  key: string;
}

interface Lookup {
  entries: Entry[];
  nameError: boolean;
}

const NAME_ERROR: Lookup = { entries: [], nameError: true };
const NO_DATA: Lookup = { entries: [], nameError: false };

const matches = (want: string | undefined, have: string): boolean => !want || want === have.toLowerCase();

function findServices(view: ClusterView, r: Extract<ClusterName, { kind: 'svc' }>, o: ZoneOptions): Lookup {
  if (!view.namespaceExists(r.namespace)) return NAME_ERROR;
  const svc = view.service(r.namespace, r.service);
  if (!svc) return NAME_ERROR;
  const base = `${r.service}.${r.namespace}.svc.${o.zone}`;
  if (svc.spec?.type === 'ExternalName') {
    const target = (svc.spec.externalName ?? '').replace(/\.+$/, '').toLowerCase();
    if (r.endpoint !== undefined || !target || isIP(target)) return NAME_ERROR;
    return { entries: [{ host: target, port: 0, key: base }], nameError: false };
  }
  const entries: Entry[] = [];
  if (isHeadless(svc) || r.endpoint !== undefined) {
    for (const g of view.endpoints(r.namespace, r.service)) {
      const ports = g.ports.length ? g.ports : [{ name: '', port: -1, protocol: '' }];
      for (const a of g.addresses) {
        const label = endpointLabel(a.ip, a.hostname);
        if (r.endpoint !== undefined && r.endpoint !== label) continue;
        for (const p of ports) {
          if (matches(r.port, p.name) && matches(r.protocol, p.protocol)) entries.push({ host: a.ip, port: p.port, key: `${label}.${base}` });
        }
      }
    }
    return { entries, nameError: entries.length === 0 };
  }
  let matched = false;
  for (const p of svc.spec?.ports ?? []) {
    if (!matches(r.port, p.name ?? '') || !matches(r.protocol, p.protocol ?? 'TCP')) continue;
    matched = true;
    for (const ip of clusterIPsOf(svc)) entries.push({ host: ip, port: p.port, key: base });
  }
  return { entries, nameError: !matched };
}

function findPods(view: ClusterView, r: Extract<ClusterName, { kind: 'pod' }>, o: ZoneOptions): Lookup {
  if (o.podRecords === 'disabled' || !view.namespaceExists(r.namespace)) return NAME_ERROR;
  const ip = podLabelToIp(r.pod);
  if (!ip) return NAME_ERROR;
  if (o.podRecords === 'verified' && !view.podNamespacesWithIP(ip).includes(r.namespace)) return NAME_ERROR;
  return { entries: [{ host: ip, port: 0, key: `${r.pod}.${r.namespace}.pod.${o.zone}` }], nameError: false };
}

function lookup(view: ClusterView, name: string, o: ZoneOptions): Lookup {
  const r = parseClusterName(name, o.zone);
  switch (r.kind) {
    case 'apex':
      return NO_DATA;
    case 'invalid':
      return NAME_ERROR;
    case 'namespace':
      return view.namespaceExists(r.namespace) ? NO_DATA : NAME_ERROR;
    case 'pod':
      return findPods(view, r, o);
    case 'svc':
      return findServices(view, r, o);
  }
}

/** The zone's SOA (CoreDNS plugin.SOA: `ns.dns.<zone>`, `hostmaster.<zone>`, 7200/1800/86400). */
export function soaRecord(view: ClusterView, o: ZoneOptions): SoaAnswer {
  return {
    type: 'SOA',
    name: o.zone,
    ttl: Math.min(o.negativeTTL, 300),
    class: 'IN',
    data: { mname: `ns.dns.${o.zone}`, rname: `hostmaster.${o.zone}`, serial: view.serial() >>> 0, refresh: 7200, retry: 1800, expire: 86400, minimum: o.negativeTTL },
  };
}

function negative(view: ClusterView, o: ZoneOptions, rcode: 'NOERROR' | 'NXDOMAIN'): LocalAnswer {
  return { rcode, answers: [], authorities: [soaRecord(view, o)], additionals: [] };
}

const familyOf = (t: 'A' | 'AAAA'): number => (t === 'A' ? 4 : 6);

/** A/AAAA answers for `qname` (as asked) from `entries`, following CNAMEs inside the zone. */
function addressAnswers(view: ClusterView, qname: string, name: string, type: 'A' | 'AAAA', entries: Entry[], o: ZoneOptions, depth: number): { answers: Answer[]; chase?: LocalAnswer['chase'] } {
  const answers: Answer[] = [];
  const seen = new Set<string>();
  let chase: LocalAnswer['chase'];
  for (const e of entries) {
    const family = isIP(e.host);
    if (family === familyOf(type)) {
      if (!seen.has(e.host)) answers.push({ type, name: qname, ttl: o.ttl, class: 'IN', data: e.host });
      seen.add(e.host);
      continue;
    }
    if (family !== 0 || e.host === name || depth >= MAX_CNAME_CHAIN) continue;
    const cname: Answer = { type: 'CNAME', name: qname, ttl: o.ttl, class: 'IN', data: e.host };
    if (inZone(e.host, o.zone)) {
      const next = lookup(view, e.host, o);
      if (next.nameError) continue;
      const sub = addressAnswers(view, e.host, e.host, type, next.entries, o, depth + 1);
      if (sub.answers.length) answers.push(cname, ...sub.answers);
      chase ??= sub.chase;
      continue;
    }
    chase ??= { cname, target: e.host, type };
  }
  return { answers, chase };
}

function srvAnswers(qname: string, entries: Entry[], o: ZoneOptions): { answers: Answer[]; additionals: Answer[] } {
  const internal = entries.filter((e) => isIP(e.host) !== 0);
  // Every entry weighs 100 in priority 0, so each SRV gets floor(100 / n), at least 1.
  const weight = Math.max(1, Math.floor(100 / Math.max(1, internal.length)));
  const answers: Answer[] = [];
  const additionals: Answer[] = [];
  const seenSrv = new Set<string>();
  const seenAddr = new Set<string>();
  for (const e of internal) {
    if (e.port === -1) continue;
    if (!seenSrv.has(`${e.key} ${e.port}`)) answers.push({ type: 'SRV', name: qname, ttl: o.ttl, class: 'IN', data: { priority: 0, weight, port: e.port, target: e.key } });
    seenSrv.add(`${e.key} ${e.port}`);
    if (!seenAddr.has(`${e.key} ${e.host}`)) additionals.push({ type: isIP(e.host) === 4 ? 'A' : 'AAAA', name: e.key, ttl: o.ttl, class: 'IN', data: e.host });
    seenAddr.add(`${e.key} ${e.host}`);
  }
  return { answers, additionals };
}

/**
 * Answers a question whose (normalised) `name` is inside the zone; `qname` is the name as asked,
 * which answers echo. Before the view has synced, a name that is not found is SERVFAIL (CoreDNS
 * does the same, so clients retry instead of caching a negative answer).
 */
export function answerZoneQuestion(view: ClusterView, qname: string, name: string, type: string, o: ZoneOptions): LocalAnswer {
  const ok = (answers: Answer[], additionals: Answer[] = []): LocalAnswer =>
    answers.length ? { rcode: 'NOERROR', answers, authorities: [], additionals } : negative(view, o, 'NOERROR');
  const nsName = `ns.dns.${o.zone}`;
  if (name === o.zone && type === 'SOA') return { rcode: 'NOERROR', answers: [{ ...soaRecord(view, o), name: qname, ttl: o.ttl }], authorities: [], additionals: [] };
  if (name === o.zone && type === 'NS') {
    const ns: Answer = { type: 'NS', name: qname, ttl: o.ttl, class: 'IN', data: nsName };
    return ok([ns], nsAddresses(nsName, o));
  }
  if (name === nsName && (type === 'A' || type === 'AAAA')) return ok(nsAddresses(nsName, o).filter((a) => a.type === type).map((a) => ({ ...a, name: qname })));
  if (type === 'TXT') {
    // The plugin answers TXT only for dns-version; any other name is NODATA, existing or not.
    if (name === `dns-version.${o.zone}`) return ok([{ type: 'TXT', name: qname, ttl: 28800, class: 'IN', data: DNS_SCHEMA_VERSION }]);
    return negative(view, o, 'NOERROR');
  }
  const found = lookup(view, name, o);
  if (found.nameError) return view.synced() ? negative(view, o, 'NXDOMAIN') : { rcode: 'SERVFAIL', answers: [], authorities: [], additionals: [] };
  switch (type) {
    case 'A':
    case 'AAAA': {
      const r = addressAnswers(view, qname, name, type, found.entries, o, 0);
      return r.chase && r.answers.length === 0 ? { ...negative(view, o, 'NOERROR'), chase: r.chase } : ok(r.answers);
    }
    case 'SRV': {
      const r = srvAnswers(qname, found.entries, o);
      return ok(r.answers, r.additionals);
    }
    case 'CNAME': {
      const e = found.entries[0];
      return ok(e && isIP(e.host) === 0 ? [{ type: 'CNAME', name: qname, ttl: o.ttl, class: 'IN', data: e.host }] : []);
    }
    default:
      return ok([]);
  }
}

function nsAddresses(nsName: string, o: ZoneOptions): Answer[] {
  return o.nameservers.map((ip) => ({ type: isIP(ip) === 6 ? 'AAAA' : 'A', name: nsName, ttl: o.ttl, class: 'IN', data: ip }) as Answer);
}

/**
 * PTR for a cluster IP (the Service) or an endpoint IP (`<label>.<svc>.<ns>.svc.<zone>`), or
 * undefined when the address is not the cluster's or the question is not a PTR: kubeadm's Corefile
 * falls through to the upstream resolvers for the rest of `in-addr.arpa` and `ip6.arpa`.
 */
export function answerReverseQuestion(view: ClusterView, qname: string, name: string, type: string, o: ZoneOptions): LocalAnswer | undefined {
  if (type !== 'PTR') return undefined;
  const ip = reverseNameToIp(name);
  if (!ip) return undefined;
  const svc = view.servicesWithIP(ip)[0];
  const targets = svc
    ? [`${svc.metadata.name}.${svc.metadata.namespace}.svc.${o.zone}`]
    : [...new Set(view.endpointsWithIP(ip).map((e) => `${endpointLabel(e.address.ip, e.address.hostname)}.${e.service}.${e.namespace}.svc.${o.zone}`))];
  if (targets.length === 0) return undefined;
  return { rcode: 'NOERROR', answers: targets.map((t) => ({ type: 'PTR', name: qname, ttl: o.ttl, class: 'IN', data: t })), authorities: [], additionals: [] };
}
