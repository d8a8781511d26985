/**
 * Which API servers are alive, for the `default/kubernetes` endpoints (kube-apiserver's "lease"
 * endpoint reconciler): each server keeps a record under `/registry/masterleases/<ip>` and
 * renews it every reconcile (10 s); a record not renewed for {@link ENDPOINT_LEASE_TTL_MS} is
 * expired and deleted by whichever server sees it. Every server computes the same address list
 * from the same records, so two servers never fight over the Endpoints.
 *
 * etcd's keys have no TTL through our Store interface, so expiry is a timestamp in the value,
 * compared with the reading server's clock: servers' clocks must agree to within seconds (NTP),
 * as kube-apiserver's own identity leases assume.
 */
import { hasCode, type Logger } from '@nodelet/base';
import type { Store } from '../storage/types.js';

/** kube-apiserver's --endpoint-reconciler-type=lease TTL (DefaultEndpointReconcilerTTL). */
export const ENDPOINT_LEASE_TTL_MS = 15_000;
export const ENDPOINT_LEASE_PREFIX = '/registry/masterleases/';

interface EndpointLeaseRecord {
  ip: string;
  port: number;
  /** Milliseconds since the epoch of the last renewal. */
  renewTime: number;
}

/** A live API server: its advertise address and port. */
export interface ApiServerEndpoint {
  ip: string;
  port: number;
}

function decode(value: Uint8Array): EndpointLeaseRecord | undefined {
  try {
    const r = JSON.parse(Buffer.from(value).toString('utf8')) as Partial<EndpointLeaseRecord>;
    return typeof r.ip === 'string' && typeof r.port === 'number' && typeof r.renewTime === 'number' ? (r as EndpointLeaseRecord) : undefined;
  } catch {
    // Not ours or torn: treated as expired and removed.
    return undefined;
  }
}

/**
 * Renews this server's record, deletes expired ones, and returns the live servers sorted by
 * address (this one included). Safe to run on every server at once: each write is a CAS, and a
 * lost race only means another server did the same work.
 */
export async function renewEndpointLease(store: Store, self: ApiServerEndpoint, now: number, log: Logger): Promise<ApiServerEndpoint[]> {
  const key = ENDPOINT_LEASE_PREFIX + self.ip;
  const value = Buffer.from(JSON.stringify({ ip: self.ip, port: self.port, renewTime: now } satisfies EndpointLeaseRecord));
  const cur = await store.get(key);
  try {
    if (cur) await store.update(key, value, cur.modRevision);
    else await store.create(key, value);
  } catch (err) {
    // Another server with our advertise address, or our own earlier write: the next round retries.
    if (!hasCode(err, 'ERR_CONFLICT') && !hasCode(err, 'ERR_ALREADY_EXISTS')) throw err;
    log.warn({ ip: self.ip }, 'Endpoint lease changed under us; another server may advertise the same address');
  }
  const others = await liveEndpoints(store, now, log, self.ip);
  return [{ ip: self.ip, port: self.port }, ...others].sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
}

/**
 * The live servers other than `exceptIp`, sorted by address; expired records are deleted on the
 * way (by compare-and-swap: a record renewed since the list is left alone).
 */
export async function liveEndpoints(store: Store, now: number, log: Logger, exceptIp?: string): Promise<ApiServerEndpoint[]> {
  const live: ApiServerEndpoint[] = [];
  for (const kv of (await store.list(ENDPOINT_LEASE_PREFIX)).items) {
    const r = decode(kv.value);
    if (r && r.ip === exceptIp) continue;
    if (r && r.renewTime + ENDPOINT_LEASE_TTL_MS > now) {
      live.push({ ip: r.ip, port: r.port });
      continue;
    }
    try {
      await store.delete(kv.key, kv.modRevision);
      log.info({ key: kv.key }, 'Removed expired API server endpoint lease');
    } catch (err) {
      // Renewed or removed by its owner or another server since the list: nothing to do.
      if (!hasCode(err, 'ERR_CONFLICT') && !hasCode(err, 'ERR_NOT_FOUND')) throw err;
    }
  }
  return live.sort((a, b) => (a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : 0));
}

/** Deletes this server's record at shutdown, so the others drop its address at their next round. */
export async function removeEndpointLease(store: Store, ip: string): Promise<void> {
  try {
    await store.delete(ENDPOINT_LEASE_PREFIX + ip);
  } catch (err) {
    if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
  }
}
