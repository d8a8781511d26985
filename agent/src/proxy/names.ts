/**
 * Names of the per-service and per-endpoint chains and sets, in kube-proxy's nftables scheme:
 * `<prefix>-<HASH>-<ns>/<svc>/<proto>/<port name>[__<ip>/<port>]`, where HASH is the first 8
 * base32 characters of the SHA-256 of the rest. The hash keeps names that differ in one digit
 * easy to tell apart; the `/` (never in a Kubernetes name) tells them from the fixed chains.
 */
import { createHash } from 'node:crypto';
import type { ProxyEndpoint, ServicePortModel } from './model.js';

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** nft names may be 256 bytes long (NFT_NAME_MAXLEN); stay well under it. */
const MAX_BASE = 240;

/** The first 8 base32 characters of the SHA-256 of `s`. */
export function hash8(s: string): string {
  const d = createHash('sha256').update(s).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of d) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 8) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    if (out.length >= 8) break;
  }
  return out;
}

/** `<hash8(name)>-<name>`, cut to stay under nft's name limit (also the NetworkPolicy names). */
export function hashedName(name: string): string {
  const n = `${hash8(name)}-${name}`;
  return n.length > MAX_BASE ? `${n.slice(0, MAX_BASE - 3)}...` : n;
}

const svcBase = (p: ServicePortModel): string => hashedName(`${p.namespace}/${p.name}/${p.protocol}/${p.portName}`);
const epBase = (p: ServicePortModel, e: ProxyEndpoint): string => hashedName(`${p.namespace}/${p.name}/${p.protocol}/${p.portName}__${e.ip}/${e.port}`);

export const clusterChainName = (p: ServicePortModel): string => `service-${svcBase(p)}`;
export const localChainName = (p: ServicePortModel): string => `local-${svcBase(p)}`;
export const externalChainName = (p: ServicePortModel): string => `external-${svcBase(p)}`;
export const endpointChainName = (p: ServicePortModel, e: ProxyEndpoint): string => `endpoint-${epBase(p, e)}`;
export const affinitySetName = (p: ServicePortModel, e: ProxyEndpoint): string => `affinity-${epBase(p, e)}`;

/** True for the per-endpoint affinity sets, whose elements the kernel adds as traffic flows. */
export function isAffinitySet(name: string): boolean {
  return name.startsWith('affinity-');
}

/** nft needs names with `/` or `.` quoted. */
export function q(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_-]*$/.test(name) ? name : `"${name}"`;
}
