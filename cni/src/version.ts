import { CniCode, CniError } from './errors.js';
import type { CniDNS, CniInterface, CniIPConfig, CniResult, CniRoute, VersionInfo } from './types.js';

/** Spec versions this engine speaks, oldest first. libcni's Current() is 1.1.0 too. */
export const SUPPORTED_VERSIONS = ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] as const;
export const CURRENT_VERSION = '1.1.0';

function parts(v: string): [number, number, number] | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)$/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function isValidVersion(v: unknown): v is string {
  return typeof v === 'string' && parts(v) !== undefined;
}

/** Semver-style comparison of "x.y.z" strings; throws on a malformed version. */
export function compareVersions(a: string, b: string): number {
  const pa = parts(a);
  const pb = parts(b);
  if (!pa || !pb) throw new RangeError(`malformed CNI version "${pa ? b : a}"`);
  return pa[0] - pb[0] || pa[1] - pb[1] || pa[2] - pb[2];
}

export function versionAtLeast(v: string, min: string): boolean {
  return compareVersions(v, min) >= 0;
}

export function isSupportedVersion(v: string): boolean {
  return (SUPPORTED_VERSIONS as readonly string[]).includes(v);
}

/**
 * The versions a list offers (cniVersion ∪ cniVersions) that this engine supports, highest
 * first. libcni likewise drops versions above its own and prefers the highest.
 */
export function candidateVersions(list: { cniVersion: string; cniVersions?: string[] }): string[] {
  const all = new Set([list.cniVersion, ...(list.cniVersions ?? [])]);
  return [...all].filter(isSupportedVersion).sort((a, b) => compareVersions(b, a));
}

/**
 * The version to speak with one plugin: the highest candidate it supports. Throws code 1
 * (incompatible version) naming the plugin and both version lists when there is none.
 */
export function negotiateVersion(plugin: string, candidates: string[], info: VersionInfo): string {
  const chosen = candidates.find((v) => info.supportedVersions.includes(v));
  if (chosen) return chosen;
  throw new CniError({
    cniCode: CniCode.IncompatibleVersion,
    msg: 'incompatible CNI versions',
    details: `config offers [${candidates.join(', ')}], plugin supports [${info.supportedVersions.join(', ')}]; set "cniVersion" (or add to "cniVersions") a version the plugin supports`,
    plugin,
  });
}

/**
 * Interprets a plugin's VERSION output like libcni's version.PluginInfo: a 0.2.0 reply without
 * a list means 0.1.0 and 0.2.0.
 */
export function parseVersionReply(plugin: string, stdout: string): VersionInfo {
  let raw: unknown;
  try {
    raw = JSON.parse(stdout);
  } catch (err) {
    throw new CniError({ cniCode: CniCode.DecodingFailure, msg: 'failed to decode VERSION output', details: snippet(stdout), plugin, cause: err });
  }
  const o = raw as { cniVersion?: unknown; supportedVersions?: unknown };
  if (typeof o !== 'object' || o === null || !isValidVersion(o.cniVersion)) {
    throw new CniError({ cniCode: CniCode.DecodingFailure, msg: 'VERSION output has no valid "cniVersion"', details: snippet(stdout), plugin });
  }
  if (o.supportedVersions === undefined && o.cniVersion === '0.2.0') return { cniVersion: '0.2.0', supportedVersions: ['0.1.0', '0.2.0'] };
  if (!Array.isArray(o.supportedVersions) || !o.supportedVersions.every(isValidVersion)) {
    throw new CniError({ cniCode: CniCode.DecodingFailure, msg: 'VERSION output has no valid "supportedVersions"', details: snippet(stdout), plugin });
  }
  return { cniVersion: o.cniVersion, supportedVersions: o.supportedVersions };
}

export function snippet(s: string, max = 200): string {
  const t = s.trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

type Json = Record<string, unknown>;

function family(address: string): '4' | '6' {
  return address.includes(':') ? '6' : '4';
}

function stripIP(ip: Json): CniIPConfig {
  const out: CniIPConfig = { address: String(ip.address) };
  if (typeof ip.gateway === 'string') out.gateway = ip.gateway;
  if (typeof ip.interface === 'number') out.interface = ip.interface;
  return out;
}

function pick<T>(src: Json, keys: readonly string[]): T {
  const out: Json = {};
  for (const k of keys) if (src[k] !== undefined) out[k] = src[k];
  return out as T;
}

const IFACE_KEYS = ['name', 'mac', 'mtu', 'sandbox', 'socketPath', 'pciID'] as const;
const ROUTE_KEYS = ['dst', 'gw', 'mtu', 'advmss', 'priority', 'table', 'scope'] as const;
const DNS_KEYS = ['nameservers', 'domain', 'search', 'options'] as const;

function legacyToCanonical(o: Json): CniResult {
  const ips: CniIPConfig[] = [];
  const routes: CniRoute[] = [];
  for (const key of ['ip4', 'ip6']) {
    const block = o[key] as Json | undefined;
    if (!block || typeof block.ip !== 'string') continue;
    const ip: CniIPConfig = { address: block.ip };
    if (typeof block.gateway === 'string') ip.gateway = block.gateway;
    ips.push(ip);
    for (const r of (block.routes as Json[] | undefined) ?? []) routes.push(pick<CniRoute>(r, ['dst', 'gw']));
  }
  const out: CniResult = { cniVersion: '1.0.0', ips, routes };
  if (o.dns && typeof o.dns === 'object') out.dns = pick<CniDNS>(o.dns as Json, DNS_KEYS);
  return out;
}

/**
 * Parses a plugin result of any version into the canonical 1.x shape. A result without
 * cniVersion gets `assumeVersion` (libcni's fixupResultVersion uses the config's version).
 */
export function parseResult(plugin: string, stdout: string, assumeVersion: string): CniResult {
  let raw: unknown;
  try {
    raw = JSON.parse(stdout);
  } catch (err) {
    throw new CniError({ cniCode: CniCode.DecodingFailure, msg: 'failed to decode result', details: `plugin printed invalid JSON: ${snippet(stdout)}`, plugin, cause: err });
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new CniError({ cniCode: CniCode.DecodingFailure, msg: 'failed to decode result', details: `expected a JSON object, got ${snippet(stdout)}`, plugin });
  }
  return toCanonical(raw as Json, assumeVersion, plugin);
}

/** Canonicalises a decoded result object (e.g. a cached one). */
export function toCanonical(o: Json, assumeVersion: string, plugin?: string): CniResult {
  const version = o.cniVersion === undefined ? assumeVersion : o.cniVersion;
  if (!isValidVersion(version) || !isSupportedVersion(version)) {
    throw new CniError({ cniCode: CniCode.IncompatibleVersion, msg: 'unsupported result version', details: `result cniVersion ${JSON.stringify(version)}`, plugin });
  }
  if (!versionAtLeast(version, '0.3.0')) return { ...legacyToCanonical(o), cniVersion: version };
  const bad = (what: string): CniError =>
    new CniError({ cniCode: CniCode.DecodingFailure, msg: 'failed to decode result', details: what, plugin });
  const out: CniResult = { cniVersion: version };
  if (o.interfaces !== undefined) {
    if (!Array.isArray(o.interfaces)) throw bad('"interfaces" must be a list');
    out.interfaces = o.interfaces.map((i: Json) => pick<CniInterface>(i, IFACE_KEYS));
  }
  if (o.ips !== undefined) {
    if (!Array.isArray(o.ips) || !o.ips.every((i: Json) => i && typeof i.address === 'string')) throw bad('"ips" must be a list of {address}');
    out.ips = o.ips.map(stripIP);
  }
  if (o.routes !== undefined) {
    if (!Array.isArray(o.routes) || !o.routes.every((r: Json) => r && typeof r.dst === 'string')) throw bad('"routes" must be a list of {dst}');
    out.routes = o.routes.map((r: Json) => pick<CniRoute>(r, ROUTE_KEYS));
  }
  if (o.dns && typeof o.dns === 'object') out.dns = pick<CniDNS>(o.dns as Json, DNS_KEYS);
  return out;
}

function dnsEmpty(d: CniDNS | undefined): boolean {
  return !d || ((d.nameservers?.length ?? 0) === 0 && !d.domain && (d.search?.length ?? 0) === 0 && (d.options?.length ?? 0) === 0);
}

/**
 * Converts a canonical result to the JSON object of `target` (pkg/types/internal/convert.go):
 * 0.3.x/0.4.0 add ips[].version and lack the 1.1 fields; 0.1.0/0.2.0 keep the first IPv4 and
 * IPv6 as ip4/ip6 and fail without any IP; 1.x omits an empty dns.
 */
export function convertResult(result: CniResult, target: string): Json {
  if (!isSupportedVersion(target)) {
    throw new CniError({ cniCode: CniCode.IncompatibleVersion, msg: 'cannot convert result', details: `unsupported target version "${target}"` });
  }
  if (versionAtLeast(target, '1.0.0')) {
    const out: Json = { cniVersion: target };
    if (result.interfaces) out.interfaces = result.interfaces;
    if (result.ips) out.ips = result.ips;
    if (result.routes) out.routes = result.routes;
    if (!dnsEmpty(result.dns)) out.dns = result.dns;
    return out;
  }
  if (versionAtLeast(target, '0.3.0')) {
    const out: Json = { cniVersion: target };
    if (result.interfaces) out.interfaces = result.interfaces.map((i) => pick(i as unknown as Json, ['name', 'mac', 'sandbox']));
    if (result.ips) out.ips = result.ips.map((ip) => ({ version: family(ip.address), ...ip }));
    if (result.routes) out.routes = result.routes.map((r) => pick(r as unknown as Json, ['dst', 'gw']));
    out.dns = result.dns ?? {};
    return out;
  }
  const out: Json = { cniVersion: target };
  for (const fam of ['4', '6'] as const) {
    const ip = result.ips?.find((i) => family(i.address) === fam);
    if (!ip) continue;
    const block: Json = { ip: ip.address };
    if (ip.gateway) block.gateway = ip.gateway;
    const routes = (result.routes ?? []).filter((r) => family(r.dst) === fam).map((r) => pick(r as unknown as Json, ['dst', 'gw']));
    if (routes.length) block.routes = routes;
    out[`ip${fam}`] = block;
  }
  if (!out.ip4 && !out.ip6) {
    throw new CniError({ cniCode: CniCode.IncompatibleVersion, msg: 'cannot convert result', details: `a ${target} result needs at least one IP` });
  }
  out.dns = result.dns ?? {};
  return out;
}
