/**
 * Service ClusterIPs and NodePorts chosen in the last five minutes, in one store key that every API
 * server on the store updates by compare-and-swap before it creates the Service:
 *
 *   read ledger (rev R) ─▶ list Services ─▶ pick free (not in Services, not in ledger)
 *        ▲                                      │
 *        └──── ERR_CONFLICT: another server ◀── CAS ledger@R + pick ─▶ create Service
 *              allocated meanwhile
 *
 * The CAS makes two servers' picks exclusive: whoever writes second re-reads the ledger and sees
 * the first one's pick even before that Service exists. Entries are kept
 * {@link LEDGER_RETENTION_MS}, longer than a create may take (the request timeout is 1 min); after that the Service itself
 * (or its absence, when the create failed) is the record. kube-apiserver keeps a bitmap of the
 * whole range in its store for the same purpose.
 */
import { hasCode } from '@nodelet/base';
import type { Store } from '../../storage/types.js';
import { StatusError } from '../status.js';

export const ALLOCATION_LEDGER_KEY = '/registry/ranges/service-allocations';
export const LEDGER_RETENTION_MS = 300_000;
const ATTEMPTS = 10;

export interface Allocation {
  ips: string[];
  nodePorts: number[];
}

interface LedgerEntry extends Allocation {
  at: number;
}

/**
 * Runs `pick(reserved)` with the recent allocations of every server and records its result in
 * the ledger; retried on a concurrent allocation. `pick` throws when the range is full. A dry run
 * (`record` false) picks as a real create would and writes nothing, as upstream's dry-run allocator.
 */
export async function allocateThroughLedger(store: Store, now: number, pick: (reserved: Allocation) => Allocation, record = true): Promise<Allocation> {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    const cur = await store.get(ALLOCATION_LEDGER_KEY);
    const entries = (cur ? parse(cur.value) : []).filter((e) => e.at + LEDGER_RETENTION_MS > now);
    const picked = pick({ ips: entries.flatMap((e) => e.ips), nodePorts: entries.flatMap((e) => e.nodePorts) });
    if (!record) return picked;
    const value = Buffer.from(JSON.stringify([...entries, { ...picked, at: now }]));
    try {
      if (cur) await store.update(ALLOCATION_LEDGER_KEY, value, cur.modRevision);
      else await store.create(ALLOCATION_LEDGER_KEY, value);
      return picked;
    } catch (err) {
      if (!hasCode(err, 'ERR_CONFLICT') && !hasCode(err, 'ERR_ALREADY_EXISTS') && !hasCode(err, 'ERR_NOT_FOUND')) throw err;
    }
  }
  throw new StatusError(500, 'InternalError', `failed to allocate a service address: ${ATTEMPTS} concurrent allocations in a row; try again`);
}

function parse(value: Uint8Array): LedgerEntry[] {
  try {
    const v = JSON.parse(Buffer.from(value).toString('utf8')) as unknown;
    return Array.isArray(v) ? (v as LedgerEntry[]).filter((e) => typeof e?.at === 'number' && Array.isArray(e.ips) && Array.isArray(e.nodePorts)) : [];
  } catch {
    // A torn or foreign value holds no reservation we could honour; it is replaced by the CAS.
    return [];
  }
}
