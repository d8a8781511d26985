/**
 * The partial sync: one `nft -f` transaction that moves the live table from the state last
 * written to the next one, touching only what differs (kube-proxy's nftables mode does the same;
 * docs/services.md "How it syncs"). Pure; the proxy keeps the states and the stale chains.
 *
 *   1. add set      affinity sets that are new
 *   2. add chain    every chain that is new or whose rules changed (all first: rules below may
 *                   jump to any of them)
 *   3. flush chain + add rule   for each of those chains
 *   4. delete element / add element   map and set elements removed, changed (delete + add), new
 *   5. flush chain  chains no longer used: nothing jumps to them after steps 3–4, and they drop
 *                   their own references (to endpoint chains, affinity sets)
 *   6. delete set   affinity sets and contributed sets/maps no longer used (their last
 *                   references went in 3 and 5)
 *
 * Contributed sets and maps (contribution.ts) are added in step 1 and their elements diffed in
 * step 4, like the proxy's own maps.
 *
 * Stale chains are not deleted here: a kernel before 6.2 may still count a reference from a map
 * element deleted in the same transaction, so the caller deletes them in a later sync, at least
 * `STALE_CHAIN_GRACE_MS` after they went stale (`renderStaleChainDeletes`), as kube-proxy does.
 */
import { addSetText } from './contribution.js';
import { ELEMENT_CONTAINERS, TABLE, elementText, type TableElement, type TableState } from './render.js';

/** How long a stale chain is kept (flushed) before it is deleted (kube-proxy waits one second). */
export const STALE_CHAIN_GRACE_MS = 1000;

export interface PartialTransaction {
  /** The transaction; '' when nothing differs. */
  script: string;
  /** Chains (re)written in steps 2–3. */
  changedChains: string[];
  /** Chains flushed in step 5, to delete later. */
  staleChains: string[];
  /** Element adds + deletes (a changed element counts twice). */
  elementChanges: number;
}

/**
 * Why `next` cannot be reached from `prev` by a partial transaction, or undefined when it can:
 * the fixed chains changed (node addresses for NodePorts), or an affinity set's timeout did
 * (nft cannot change a set's timeout in place).
 */
export function needsFullSync(prev: TableState, next: TableState): string | undefined {
  if (JSON.stringify(prev.base) !== JSON.stringify(next.base)) return 'base chains changed';
  for (const [name, timeoutS] of next.affinitySets) {
    const was = prev.affinitySets.get(name);
    if (was !== undefined && was !== timeoutS) return 'affinity timeout changed';
  }
  for (const [name, set] of next.sets) {
    const was = prev.sets.get(name);
    if (was && (was.kind !== set.kind || was.spec !== set.spec)) return `set ${name} changed type`;
  }
  return undefined;
}

const sameRules = (a: readonly string[] | undefined, b: readonly string[]): boolean => a === b || (a !== undefined && a.length === b.length && a.every((r, i) => r === b[i]));

/** The transaction from `prev` to `next` (call `needsFullSync` first). */
export function renderPartial(prev: TableState, next: TableState, table = TABLE): PartialTransaction {
  const t = `ip ${table}`;
  const out: string[] = [];
  for (const [name, timeoutS] of next.affinitySets) {
    if (!prev.affinitySets.has(name)) out.push(`add set ${t} ${name} { type ipv4_addr; flags dynamic,timeout; timeout ${timeoutS}s; }`);
  }
  for (const [name, s] of next.sets) if (!prev.sets.has(name)) out.push(addSetText(table, name, s));
  const changed = [...next.chains].filter(([name, rules]) => !sameRules(prev.chains.get(name), rules));
  for (const [name] of changed) out.push(`add chain ${t} ${name}`);
  for (const [name, rules] of changed) {
    // A chain that is new here may still exist, flushed, as a stale chain of an earlier sync.
    out.push(`flush chain ${t} ${name}`);
    for (const r of rules) out.push(`add rule ${t} ${name} ${r}`);
  }
  let elementChanges = 0;
  for (const c of ELEMENT_CONTAINERS) {
    const before = prev.elements[c];
    const after = next.elements[c];
    elementChanges += elementDiff(out, t, c, before, after);
  }
  // Contributed sets (contribution.ts); a new one starts empty, a removed one is deleted below.
  for (const [name, s] of next.sets) elementChanges += elementDiff(out, t, name, prev.sets.get(name)?.elements ?? new Map(), s.elements);
  const stale = [...prev.chains.keys()].filter((name) => !next.chains.has(name));
  for (const name of stale) out.push(`flush chain ${t} ${name}`);
  for (const name of prev.affinitySets.keys()) if (!next.affinitySets.has(name)) out.push(`delete set ${t} ${name}`);
  for (const [name, s] of prev.sets) if (!next.sets.has(name)) out.push(`delete ${s.kind} ${t} ${name}`);
  return { script: out.length ? out.join('\n') + '\n' : '', changedChains: changed.map(([n]) => n), staleChains: stale, elementChanges };
}

/** Appends the deletes and adds that turn `before` into `after` in `container`; returns how many. */
function elementDiff(out: string[], t: string, container: string, before: ReadonlyMap<string, TableElement>, after: ReadonlyMap<string, TableElement>): number {
  let n = 0;
  const adds: string[] = [];
  for (const [key, e] of after) {
    const was = before.get(key);
    if (was === e || (was && was.value === e.value && was.comment === e.comment)) continue;
    if (was) {
      out.push(`delete element ${t} ${container} { ${key} }`);
      n++;
    }
    adds.push(`add element ${t} ${container} { ${elementText(key, e)} }`);
  }
  for (const key of before.keys()) {
    if (after.has(key)) continue;
    out.push(`delete element ${t} ${container} { ${key} }`);
    n++;
  }
  out.push(...adds);
  return n + adds.length;
}

/**
 * Deletes stale chains (`add` first, so a chain that is already gone does not fail the
 * transaction). Run as its own transaction before a sync's main one, as kube-proxy does.
 */
export function renderStaleChainDeletes(chains: readonly string[], table = TABLE): string {
  return chains.flatMap((c) => [`add chain ip ${table} ${c}`, `delete chain ip ${table} ${c}`]).join('\n') + '\n';
}
