/**
 * The lab's route step: what flannel's host-gw backend or a cloud route controller does for a real
 * cluster. Every place a node lives in (the host, each node-network namespace) gets a route to
 * every other node's pod CIDR through that node's address on the node network:
 *
 *   ip [-n <place>] route replace <podCIDR of B> via <IP of B> proto 149
 *
 * The agent does not do this (a kubelet never does); `labAddNode` runs `syncPodRoutes` once the
 * new node has a pod CIDR, `labRemoveNode` runs `prunePodRoutes` after its namespace is gone.
 * Routes are marked with their own protocol number, so the step finds and removes only its own.
 *
 *   Node list (API) + places (host, nodelet-* namespaces) ─▶ planPodRoutes (pure) ─▶ diff ─▶ ip route
 */
import { inCidr, ip, ipv4Addresses, listNetns } from './node-network.js';

/** The routing protocol number the lab's pod routes carry (not assigned in rtnetlink.h). */
export const LAB_ROUTE_PROTO = '149';

/** A network namespace the lab's nodes live in; `netns` undefined is the host. */
export interface RoutePlace {
  netns?: string;
  addresses: string[];
}

export interface NodeRouteInfo {
  name: string;
  /** The node's InternalIP. */
  ip: string;
  podCIDR: string;
}

export interface PodRoute {
  dst: string;
  via: string;
}

const placeKey = (p: RoutePlace): string => p.netns ?? '';

/**
 * The routes each place on `networkCidr` should hold: one per node on that network that has a
 * pod CIDR and lives in another live place. Nodes off the network (a node sharing the host's
 * namespace under another address) and nodes no live place holds (a removed node whose Node
 * object remains) get none. Keyed by netns name, '' for the host. Pure.
 */
export function planPodRoutes(places: readonly RoutePlace[], nodes: readonly NodeRouteInfo[], networkCidr: string): Map<string, PodRoute[]> {
  const onNet = places.filter((p) => p.addresses.some((a) => inCidr(a, networkCidr)));
  const live = new Set(onNet.flatMap((p) => p.addresses));
  const out = new Map<string, PodRoute[]>();
  for (const p of onNet) {
    const routes = nodes
      .filter((n) => n.podCIDR && inCidr(n.ip, networkCidr) && live.has(n.ip) && !p.addresses.includes(n.ip))
      .map((n) => ({ dst: n.podCIDR, via: n.ip }))
      .sort((a, b) => a.dst.localeCompare(b.dst));
    out.set(placeKey(p), routes);
  }
  return out;
}

/** The host and every `nodelet-*` namespace, with their IPv4 addresses. */
export async function listRoutePlaces(signal?: AbortSignal): Promise<RoutePlace[]> {
  const places: RoutePlace[] = [{ addresses: (await ipv4Addresses({ signal })).map((a) => a.local) }];
  for (const netns of await listNetns({ prefix: 'nodelet-', signal })) {
    // A namespace being deleted right now has no addresses left to route through.
    const addrs = await ipv4Addresses({ netns, signal }).catch(() => []);
    places.push({ netns, addresses: addrs.map((a) => a.local) });
  }
  return places;
}

/** The lab's routes (our protocol number) in one place. */
export async function labRoutes(place: { netns?: string }, signal?: AbortSignal): Promise<PodRoute[]> {
  const doc = JSON.parse((await ip(['-j', '-4', 'route', 'show', 'proto', LAB_ROUTE_PROTO], { netns: place.netns, signal })) || '[]') as Array<{ dst: string; gateway?: string }>;
  return doc.filter((r) => r.gateway).map((r) => ({ dst: r.dst, via: r.gateway! }));
}

/**
 * Brings every place on `networkCidr` to the planned routes: adds missing ones, replaces ones with
 * another gateway, deletes the lab's routes through that network nobody needs. Idempotent.
 */
export async function syncPodRoutes(o: { networkCidr: string; nodes: readonly NodeRouteInfo[]; signal?: AbortSignal }): Promise<{ added: number; removed: number }> {
  const places = await listRoutePlaces(o.signal);
  const plan = planPodRoutes(places, o.nodes, o.networkCidr);
  let added = 0;
  let removed = 0;
  for (const p of places) {
    const want = plan.get(placeKey(p));
    if (!want) continue;
    const have = await labRoutes(p, o.signal);
    for (const r of want) {
      if (have.some((h) => h.dst === r.dst && h.via === r.via)) continue;
      await ip(['route', 'replace', r.dst, 'via', r.via, 'proto', LAB_ROUTE_PROTO], { netns: p.netns, signal: o.signal });
      added++;
    }
    for (const h of have) {
      if (!inCidr(h.via, o.networkCidr) || want.some((r) => r.dst === h.dst)) continue;
      await ip(['route', 'delete', h.dst, 'via', h.via, 'proto', LAB_ROUTE_PROTO], { netns: p.netns, signal: o.signal });
      removed++;
    }
  }
  return { added, removed };
}

/**
 * Deletes the lab's routes whose gateway no place holds any more (the node behind it was
 * removed). Needs no API server, so it also runs when the cluster is gone. Idempotent.
 */
export async function prunePodRoutes(signal?: AbortSignal): Promise<number> {
  const places = await listRoutePlaces(signal);
  const live = new Set(places.flatMap((p) => p.addresses));
  let removed = 0;
  for (const p of places) {
    for (const r of await labRoutes(p, signal)) {
      if (live.has(r.via)) continue;
      await ip(['route', 'delete', r.dst, 'via', r.via, 'proto', LAB_ROUTE_PROTO], { netns: p.netns, signal });
      removed++;
    }
  }
  return removed;
}
