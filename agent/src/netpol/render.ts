/**
 * NetworkPolicy rules for this node, as a contribution to the service proxy's table
 * (proxy/contribution.ts; docs/network.md "NetworkPolicy"). Pure: the same policies, namespaces
 * and pods give the same chains, sets and elements, so a table of cases can assert them.
 *
 *   forward (filter, priority 0) ─▶ netpol-forward
 *     ct state established,related accept                      replies and allowed flows
 *     ip saddr vmap @netpol-egress-pods   ─jump─▶ netpol-egress-<H>    local pod isolated for egress
 *     ip daddr vmap @netpol-ingress-pods  ─jump─▶ netpol-ingress-<H>   local pod isolated for ingress
 *   netpol-<dir>-<H>   (one per distinct list of policies selecting a pod)
 *     jump netpol-<H>-<ns>/<policy>/<dir>    each rule that allows sets mark bit 0x10000, returns
 *     meta mark & 0x10000 == 0 drop          no policy allowed it
 *     meta mark set meta mark & 0xfffeffff   clear the bit for the other direction
 *
 * Pod peers are named sets of IPs (one per policy rule), named ports a set of
 * `ip . proto . port` of the pods they resolve on, so the rule count grows with the policies,
 * never with pod pairs. Only the forward hook is filtered: the node's own traffic to its pods
 * (output) is never policed (probes), nor pod traffic to the node (input).
 */
import { isIPv4 } from 'node:net';
import { labelSelectorFromObject, matchLabels, type LabelSelector, type Namespace, type NetworkPolicy, type NetworkPolicyPeer, type NetworkPolicyPort, type Pod } from '@nodelet/api/agent';
import { inIpv4Cidr, tryParseIpv4 } from '@nodelet/base';
import type { NamedSet, TableContribution } from '../proxy/contribution.js';
import { hash8, hashedName } from '../proxy/names.js';
import type { TableElement } from '../proxy/render.js';

/** The mark bit a policy rule sets when it allows a packet (kube-proxy uses 0x4000, kube-router 0x10000). */
export const ALLOW_MARK = '0x10000';
const CLEAR_ALLOW = '0xfffeffff';
export const INGRESS_MAP = 'netpol-ingress-pods';
export const EGRESS_MAP = 'netpol-egress-pods';
export const FORWARD_CHAIN = 'netpol-forward';

type Direction = 'ingress' | 'egress';

export interface NetpolInput {
  policies: readonly NetworkPolicy[];
  namespaces: readonly Namespace[];
  /** Pods of every node (peers), with this node's among them. */
  pods: readonly Pod[];
  nodeName: string;
  /** Contribution version (handed back by the proxy once live). */
  version: number;
}

export interface NetpolContribution extends TableContribution {
  /** The local pod IPs this contribution covers (isolated or not). */
  localIPs: ReadonlySet<string>;
  /** Policies whose rules it holds (`ns/name`). */
  policyKeys: ReadonlySet<string>;
}

interface PodInfo {
  ns: string;
  labels: Record<string, string>;
  ips: string[];
  local: boolean;
  pod: Pod;
}

/** The pod's IPv4 addresses as its status gives them; none for host-network and finished pods. */
export function podIPv4s(p: Pod): string[] {
  if (p.spec?.hostNetwork || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') return [];
  const ips = (p.status?.podIPs ?? []).map((x) => x.ip);
  if (!ips.length && p.status?.podIP) ips.push(p.status.podIP);
  return [...new Set(ips.filter((ip) => isIPv4(ip)))];
}

/** A parsed selector's matcher; an unparsable one (the API validates, so never expected) matches nothing. */
function matcher(sel: LabelSelector | undefined): (labels: Record<string, string>) => boolean {
  try {
    const parsed = labelSelectorFromObject(sel ?? {});
    return (l) => matchLabels(parsed, l);
  } catch {
    // Fail closed: a selector we cannot read selects no peer and no pod.
    return () => false;
  }
}

/** The policy types: as given, else Ingress plus Egress when it has egress rules (the API's default). */
export function policyTypes(np: NetworkPolicy): Direction[] {
  const t = np.spec?.policyTypes;
  if (t?.length) return t.map((x) => (x === 'Egress' ? 'egress' : 'ingress'));
  return np.spec?.egress?.length ? ['ingress', 'egress'] : ['ingress'];
}

const sortIPs = (ips: Iterable<string>): string[] => [...ips].sort((a, b) => ipNum(a) - ipNum(b));
const ipNum = (ip: string): number => tryParseIpv4(ip) ?? 0; // only IPv4 addresses reach here (podIPs)


class Builder {
  readonly chains = new Map<string, string[]>();
  readonly sets = new Map<string, NamedSet>();

  set(name: string, spec: string, keys: Iterable<string>): void {
    const elements = new Map<string, TableElement>();
    for (const k of keys) elements.set(k, {});
    this.sets.set(name, { kind: 'set', spec, elements });
  }
}

/** Builds the contribution: isolation maps, per-policy chains and peer/port sets, the hooked chain. */
export function buildNetpolContribution(input: NetpolInput): NetpolContribution {
  const nsLabels = new Map<string, Record<string, string>>();
  for (const n of input.namespaces) if (n.metadata.name) nsLabels.set(n.metadata.name, n.metadata.labels ?? {});
  const labelsOfNs = (ns: string): Record<string, string> => nsLabels.get(ns) ?? { 'kubernetes.io/metadata.name': ns };
  const pods: PodInfo[] = [];
  const localIPs = new Set<string>();
  for (const p of input.pods) {
    const ips = podIPv4s(p);
    if (!ips.length) continue;
    const local = p.spec?.nodeName === input.nodeName;
    pods.push({ ns: p.metadata.namespace ?? 'default', labels: p.metadata.labels ?? {}, ips, local, pod: p });
    if (local) for (const ip of ips) localIPs.add(ip);
  }
  const b = new Builder();
  // Local pod IP → policy chains selecting it, per direction.
  const selecting: Record<Direction, Map<string, string[]>> = { ingress: new Map(), egress: new Map() };
  const policies = [...input.policies].sort((x, y) => key(x).localeCompare(key(y)));
  for (const np of policies) {
    const ns = np.metadata.namespace ?? 'default';
    const selects = matcher(np.spec?.podSelector);
    const targets = pods.filter((p) => p.local && p.ns === ns && selects(p.labels));
    for (const dir of policyTypes(np)) {
      const chain = `netpol-${hashedName(`${key(np)}/${dir}`)}`;
      b.chains.set(chain, policyRules(b, np, dir, targets, pods, labelsOfNs));
      for (const t of targets) for (const ip of t.ips) {
        const list = selecting[dir].get(ip);
        if (list) list.push(chain);
        else selecting[dir].set(ip, [chain]);
      }
    }
  }
  const maps: Record<Direction, Map<string, TableElement>> = { ingress: new Map(), egress: new Map() };
  for (const dir of ['ingress', 'egress'] as const) {
    for (const ip of sortIPs(selecting[dir].keys())) {
      const chains = selecting[dir].get(ip)!;
      const combo = `netpol-${dir}-${hash8(chains.join(','))}`;
      if (!b.chains.has(combo)) b.chains.set(combo, [...chains.map((c) => `jump ${c}`), `meta mark & ${ALLOW_MARK} == 0 drop`, `meta mark set meta mark & ${CLEAR_ALLOW}`]);
      maps[dir].set(ip, { value: `jump ${combo}` });
    }
  }
  const sets = new Map<string, NamedSet>([
    [EGRESS_MAP, { kind: 'map', spec: 'type ipv4_addr : verdict;', elements: maps.egress }],
    [INGRESS_MAP, { kind: 'map', spec: 'type ipv4_addr : verdict;', elements: maps.ingress }],
    ...b.sets,
  ]);
  const base: Array<[string, string[]]> = [[FORWARD_CHAIN, [
    'type filter hook forward priority 0; policy accept;',
    'ct state established,related accept',
    `ip saddr vmap @${EGRESS_MAP}`,
    `ip daddr vmap @${INGRESS_MAP}`,
  ]]];
  return { base, chains: b.chains, sets, version: input.version, localIPs, policyKeys: new Set(policies.map(key)) };
}

const key = (np: NetworkPolicy): string => `${np.metadata.namespace ?? 'default'}/${np.metadata.name ?? ''}`;

/** The rules of one policy in one direction: each allowing (peer, port) pair sets the mark and returns. */
function policyRules(b: Builder, np: NetworkPolicy, dir: Direction, targets: readonly PodInfo[], pods: readonly PodInfo[], labelsOfNs: (ns: string) => Record<string, string>): string[] {
  const rules = (dir === 'ingress' ? np.spec?.ingress : np.spec?.egress) ?? [];
  const ns = np.metadata.namespace ?? 'default';
  const peerAddr = dir === 'ingress' ? 'saddr' : 'daddr';
  const out: string[] = [];
  rules.forEach((rule, i) => {
    const peers = (dir === 'ingress' ? (rule as { from?: NetworkPolicyPeer[] }).from : (rule as { to?: NetworkPolicyPeer[] }).to) ?? [];
    const ports = rule.ports ?? [];
    const peerPods = selectorPeerPods(peers, ns, pods, labelsOfNs);
    const peerMatches: string[] = [];
    if (!peers.length) peerMatches.push('');
    if (peers.some((p) => p.podSelector || p.namespaceSelector)) {
      const set = `netpol-${hashedName(`${key(np)}/${dir}/${i}/peers`)}`;
      b.set(set, 'type ipv4_addr;', sortIPs(new Set(peerPods.flatMap((p) => p.ips))));
      peerMatches.push(`ip ${peerAddr} @${set}`);
    }
    for (const p of peers) {
      // IPv4 only: an IPv6 block matches no packet here (and an ip-family table refuses it).
      if (!p.ipBlock || p.ipBlock.cidr.includes(':')) continue;
      const except = p.ipBlock.except ?? [];
      peerMatches.push(`ip ${peerAddr} ${p.ipBlock.cidr}${except.length ? ` ip ${peerAddr} != { ${except.join(', ')} }` : ''}`);
    }
    // Named ports resolve on the pods the traffic goes to: the selected pods for ingress, the
    // peers (any pod when the rule names none) for egress.
    const dests = dir === 'ingress' ? targets : peers.length ? [...peerPods, ...ipBlockPods(peers, pods)] : pods;
    const portMatches = portMatchesOf(b, ports, `netpol-${hashedName(`${key(np)}/${dir}/${i}/ports`)}`, dests);
    for (const pm of peerMatches) for (const po of portMatches) out.push([pm, po, `meta mark set meta mark | ${ALLOW_MARK} return`].filter(Boolean).join(' '));
  });
  return out;
}

/** Pods matched by the selector peers (a podSelector alone is the policy's namespace; both are ANDed). */
function selectorPeerPods(peers: readonly NetworkPolicyPeer[], ns: string, pods: readonly PodInfo[], labelsOfNs: (ns: string) => Record<string, string>): PodInfo[] {
  const out = new Set<PodInfo>();
  for (const peer of peers) {
    if (!peer.podSelector && !peer.namespaceSelector) continue;
    const podOk = matcher(peer.podSelector);
    const nsOk = peer.namespaceSelector ? matcher(peer.namespaceSelector) : undefined;
    for (const p of pods) {
      if (nsOk ? !nsOk(labelsOfNs(p.ns)) : p.ns !== ns) continue;
      if (podOk(p.labels)) out.add(p);
    }
  }
  return [...out];
}

function ipBlockPods(peers: readonly NetworkPolicyPeer[], pods: readonly PodInfo[]): PodInfo[] {
  const blocks = peers.flatMap((p) => (p.ipBlock ? [p.ipBlock] : []));
  if (!blocks.length) return [];
  return pods.filter((p) => p.ips.some((ip) => blocks.some((bl) => inIpv4Cidr(ip, bl.cidr) && !(bl.except ?? []).some((e) => inIpv4Cidr(ip, e)))));
}

/**
 * The port matches of a rule ('' = any port): numbered ports (with endPort ranges) as one
 * anonymous `proto . port` set, bare protocols as a protocol set, named ports as a named set of
 * `ip . proto . port` over `dests`.
 */
function portMatchesOf(b: Builder, ports: readonly NetworkPolicyPort[], setName: string, dests: readonly PodInfo[]): string[] {
  if (!ports.length) return [''];
  const numbered: string[] = [];
  const protos: string[] = [];
  const named: Array<{ name: string; proto: string }> = [];
  for (const p of ports) {
    const proto = (p.protocol ?? 'TCP').toLowerCase();
    if (p.port === undefined) protos.push(proto);
    else if (typeof p.port === 'number') numbered.push(`${proto} . ${p.port}${p.endPort !== undefined && p.endPort > p.port ? `-${p.endPort}` : ''}`);
    else if (/^[0-9]+$/.test(p.port)) numbered.push(`${proto} . ${Number(p.port)}`);
    else named.push({ name: p.port, proto });
  }
  const out: string[] = [];
  if (numbered.length) out.push(`meta l4proto . th dport { ${[...new Set(numbered)].join(', ')} }`);
  if (protos.length) out.push(`meta l4proto { ${[...new Set(protos)].join(', ')} }`);
  if (named.length) {
    const keys = new Set<string>();
    for (const d of dests) {
      for (const c of d.pod.spec?.containers ?? []) {
        for (const cp of c.ports ?? []) {
          const proto = (cp.protocol ?? 'TCP').toLowerCase();
          if (!cp.name || !named.some((n) => n.name === cp.name && n.proto === proto)) continue;
          for (const ip of d.ips) keys.add(`${ip} . ${proto} . ${cp.containerPort}`);
        }
      }
    }
    b.set(setName, 'type ipv4_addr . inet_proto . inet_service;', [...keys].sort());
    out.push(`ip daddr . meta l4proto . th dport @${setName}`);
  }
  return out;
}
