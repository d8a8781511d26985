/**
 * Where `pods/proxy`, `services/proxy` and `nodes/proxy` send a request (kube-apiserver's
 * ResourceLocation of each strategy). The name segment may carry a scheme and a port:
 * `name`, `name:port` or `scheme:name:port`, scheme `http`, `https` or empty.
 *
 *   pods/<p>[:port]             the pod's IP (global unicast only, else 400 `address not allowed`),
 *                               at the port given, else the first declared container port, else none
 *   services/<[scheme:]s[:port]> a ready endpoint of the Service's EndpointSlices whose port has the
 *                               name asked (a number is first mapped to the Service port's name; no
 *                               such port: 503), whose target is a pod of the namespace holding that
 *                               IP (upstream's isValidAddress); none: 503 `no endpoints available`
 *   nodes/<n>[:port]            the node's agent (InternalIP, the daemon endpoint port) over TLS as
 *                               the API server's kubelet client; another port: plain `http` (or the
 *                               scheme given) to that port with no credentials, as upstream's
 *                               proxy transport
 *
 * The server dials pod IPs itself, as kube-apiserver does: a lab or single-machine server shares
 * the host with the pod bridge; a server elsewhere needs a route to the pod network.
 */
import type { ServerContext } from '../context.js';
import { compileFilter } from '../filter.js';
import type { ApiObject, Json } from '../object.js';
import { badRequest, StatusError } from '../status.js';
import { agentAddress } from './node-proxy.js';
import { checkNodeProxyTarget, checkNotSelf, isGlobalUnicast } from './proxy-target.js';

/** A proxy request's name segment, split (upstream utilnet.SplitSchemeNamePort). */
export interface SchemeNamePort {
  scheme: '' | 'http' | 'https';
  name: string;
  port: string;
}

/** `name`, `name:port` or `scheme:name:port`; undefined when malformed (more parts, empty name, other scheme). */
export function splitSchemeNamePort(id: string): SchemeNamePort | undefined {
  const parts = id.split(':');
  let scheme = '';
  let name: string;
  let port = '';
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) [name, port] = [parts[0]!, parts[1]!];
  else if (parts.length === 3) [scheme, name, port] = [parts[0]!, parts[1]!, parts[2]!];
  else return undefined;
  if (!name || (scheme !== '' && scheme !== 'http' && scheme !== 'https')) return undefined;
  return { scheme: scheme as SchemeNamePort['scheme'], name, port };
}

/** Where to send a proxied request. */
export interface ProxyLocation {
  scheme: 'http' | 'https';
  host: string;
  /** Undefined: the scheme's default port. */
  port: number | undefined;
  /** Through the agent client (TLS verified against the agent CA, the server's kubelet client credentials). */
  agent: boolean;
}

/** Picks among candidates; tests pass a fixed choice. */
export type Pick = (n: number) => number;
const randomPick: Pick = (n) => Math.floor(Math.random() * n);

function parsePort(port: string, what: string): number | undefined {
  if (port === '') return undefined;
  const n = Number(port);
  if (!/^\d+$/.test(port) || n < 1 || n > 65535) throw badRequest(`invalid port "${port}" in ${what} request`);
  return n;
}

/** `pods/<id>/proxy`: the pod's IP and the port asked, or its first declared container port. */
export async function podProxyLocation(ctx: ServerContext, namespace: string, id: string): Promise<ProxyLocation> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid pod request "${id}"`);
  const pod = await ctx.resource('', 'v1', 'pods')!.registry.get(namespace, parsed.name);
  let port = parsed.port;
  if (port === '') {
    for (const c of ((pod.spec as Json | undefined)?.containers ?? []) as Json[]) {
      const first = ((c.ports ?? []) as Json[])[0];
      if (first) {
        port = String(first.containerPort);
        break;
      }
    }
  }
  const ip = podIPs(pod)[0] ?? '';
  if (!isGlobalUnicast(ip)) throw badRequest('address not allowed');
  const loc: ProxyLocation = { scheme: parsed.scheme || 'http', host: ip, port: parsePort(port, 'pod'), agent: false };
  if (loc.port !== undefined) await checkNotSelf(ctx, ip, loc.port);
  return loc;
}

function podIPs(pod: ApiObject): string[] {
  const status = (pod.status ?? {}) as Json;
  const ips = ((status.podIPs ?? []) as Json[]).map((p) => String(p.ip ?? '')).filter(Boolean);
  if (!ips.length && typeof status.podIP === 'string' && status.podIP) ips.push(status.podIP);
  return ips;
}

/**
 * `services/<id>/proxy`: a ready endpoint of the Service serving the port asked. A numbered port
 * is the Service's `port`, mapped to its name; a name (or nothing, the unnamed port) is matched
 * against the EndpointSlices' port names, as upstream does against Endpoints.
 */
export async function serviceProxyLocation(ctx: ServerContext, namespace: string, id: string, pick: Pick = randomPick): Promise<ProxyLocation> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid service request "${id}"`);
  const svc = await ctx.resource('', 'v1', 'services')!.registry.get(namespace, parsed.name);
  let portName = parsed.port;
  if (/^\d+$/.test(portName)) {
    const num = Number(portName);
    const found = (((svc.spec as Json | undefined)?.ports ?? []) as Json[]).find((p) => Number(p.port) === num);
    if (!found) throw unavailable(`no service port ${num} found for service "${parsed.name}"`);
    portName = String(found.name ?? '');
  }
  const slices = ctx.resource('discovery.k8s.io', 'v1', 'endpointslices')!;
  const filter = compileFilter(slices.def, `kubernetes.io/service-name=${parsed.name}`, null);
  const { items } = await slices.registry.list({ namespace, filter });
  const candidates: Array<{ ip: string; port: number; pod?: string }> = [];
  for (const slice of items as unknown as Json[]) {
    const port = ((slice.ports ?? []) as Json[]).find((p) => String(p.name ?? '') === portName && p.port !== undefined);
    if (!port) continue;
    for (const ep of (slice.endpoints ?? []) as Json[]) {
      // A nil `ready` counts as ready (EndpointConditions' contract).
      if ((ep.conditions as Json | undefined)?.ready === false) continue;
      const ref = ep.targetRef as Json | undefined;
      const pod = ref?.kind === 'Pod' && (ref.namespace ?? namespace) === namespace ? String(ref.name) : undefined;
      for (const ip of (ep.addresses ?? []) as string[]) candidates.push({ ip, port: Number(port.port), ...(pod ? { pod } : {}) });
    }
  }
  // Start at a random endpoint and take the first whose pod still holds its IP.
  const start = candidates.length ? pick(candidates.length) : 0;
  for (let i = 0; i < candidates.length; i++) {
    const c = candidates[(start + i) % candidates.length]!;
    if (!c.pod || !isGlobalUnicast(c.ip)) continue;
    const pod = await ctx.resource('', 'v1', 'pods')!.registry.find(namespace, c.pod);
    if (!pod || !podIPs(pod).includes(c.ip)) continue;
    await checkNotSelf(ctx, c.ip, c.port);
    return { scheme: parsed.scheme || 'http', host: c.ip, port: c.port, agent: false };
  }
  throw unavailable(`no endpoints available for service "${id}"`);
}

/** `nodes/<id>/proxy`: the node's agent, or another port of the node's address without credentials. */
export async function nodeProxyLocation(ctx: ServerContext, id: string): Promise<ProxyLocation> {
  const parsed = splitSchemeNamePort(id);
  if (!parsed) throw badRequest(`invalid node request "${id}"`);
  const node = await ctx.resource('', 'v1', 'nodes')!.registry.get(undefined, parsed.name);
  const addr = agentAddress(node, parsed.name);
  await checkNodeProxyTarget(addr.host);
  if (parsed.port === '' || parsed.port === String(addr.port)) {
    await checkNotSelf(ctx, addr.host, addr.port);
    return { scheme: 'https', host: addr.host, port: addr.port, agent: true };
  }
  const port = parsePort(parsed.port, 'node')!;
  await checkNotSelf(ctx, addr.host, port);
  return { scheme: parsed.scheme || 'http', host: addr.host, port, agent: false };
}

/** A 503 without Retry-After: client-go would otherwise retry a proxy that cannot succeed. */
export function unavailable(message: string): StatusError {
  return new StatusError(503, 'ServiceUnavailable', message, undefined, 0);
}
