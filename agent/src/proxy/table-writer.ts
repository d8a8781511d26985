/**
 * Writes the table, fully or partially, and remembers what it wrote (docs/services.md "How it
 * syncs"). Owned and called by the proxy's single sync loop, never concurrently.
 *
 *   write(ports) ─▶ next state ─┬─ full: no known live state (start, after a failure), asked for
 *                               │        (drift), or not expressible as a diff (needsFullSync)
 *                               │        ─▶ monitor off ─▶ whole-table transaction ─▶ monitor on
 *                               └─ partial: delete chains stale for ≥ 1 s (own transaction)
 *                                        ─▶ diff transaction (partial.ts), if anything differs
 *   any failure ─▶ live state forgotten ─▶ the next write is full
 *
 * The monitor is off during a full write: the batch is large enough (100,000+ objects at 5,000
 * Services) to overflow its socket, and a full write replaces whatever it would have reported.
 */
import { describeError, unlessNotFound, type Clock, type Logger } from '@nodelet/base';
import type { ServicePortModel } from './model.js';
import type { TableMonitor } from './monitor.js';
import { affinityEntries, type Nft } from './nft.js';
import { STALE_CHAIN_GRACE_MS, needsFullSync, renderPartial, renderStaleChainDeletes } from './partial.js';
import { addContribution, type TableContribution } from './contribution.js';
import { TableStateCache, buildTableState, renderFull, type RenderOptions, type TableState } from './render.js';

export type WriteMode = 'full' | 'partial';

export interface WriteResult {
  mode: WriteMode;
  /** An `nft -f` ran (a partial sync with nothing to change runs none). */
  wrote: boolean;
  /** Time spent in the main `nft -f`. */
  applyMs: number;
  state: TableState;
  /** Per-service chains (re)written and map/set elements added or deleted (partial syncs). */
  changedChains: number;
  elementChanges: number;
  /** Why a full write was chosen, when it was. */
  fullReason?: string;
  /** Deleting stale chains failed (they are retried in a later sync). */
  cleanupFailed: boolean;
}

export interface TableWriterOptions {
  nft: Nft;
  table: string;
  log: Logger;
  clock: Clock;
  monitor?: TableMonitor;
}

export class TableWriter {
  readonly #o: TableWriterOptions;
  /** What the live table holds, as last written; undefined = unknown (write fully). */
  #state: TableState | undefined;
  /** Flushed chains nothing refers to any more, and when they went stale (monotonic ms). */
  readonly #stale = new Map<string, number>();
  readonly #cache = new TableStateCache();

  constructor(o: TableWriterOptions) {
    this.#o = o;
  }

  /** Forgets the live state, so the next write is full. */
  invalidate(): void {
    this.#state = undefined;
  }

  /** Milliseconds until the oldest stale chain may be deleted; undefined when there is none. */
  cleanupDueInMs(): number | undefined {
    if (!this.#stale.size) return undefined;
    const oldest = Math.min(...this.#stale.values());
    return Math.max(0, oldest + STALE_CHAIN_GRACE_MS - this.#o.clock.monotonic());
  }

  /** Brings the live table to `ports` (and `extra`'s rules); `full` forces a whole-table write. */
  async write(ports: readonly ServicePortModel[], opts: RenderOptions, full: string | undefined, signal: AbortSignal, extra?: TableContribution): Promise<WriteResult> {
    const next = addContribution(buildTableState(ports, opts, this.#cache), extra);
    const prev = this.#state;
    const fullReason = full ?? (prev ? needsFullSync(prev, next) : 'no known live state');
    this.#state = undefined;
    if (fullReason !== undefined || !prev) {
      const applyMs = await this.#writeFull(next, opts, signal);
      this.#stale.clear();
      this.#state = next;
      return { mode: 'full', wrote: true, applyMs, state: next, changedChains: next.chains.size, elementChanges: 0, fullReason, cleanupFailed: false };
    }
    const cleanupFailed = !(await this.#deleteStaleChains(next.chains, signal));
    const tx = renderPartial(prev, next, this.#o.table);
    let applyMs = 0;
    if (tx.script) {
      const t0 = this.#o.clock.monotonic();
      await this.#o.nft.apply(tx.script, signal, (pid) => this.#o.monitor?.own(pid));
      applyMs = this.#o.clock.monotonic() - t0;
    }
    const now = this.#o.clock.monotonic();
    for (const c of tx.changedChains) this.#stale.delete(c);
    for (const c of tx.staleChains) this.#stale.set(c, now);
    this.#state = next;
    return { mode: 'partial', wrote: tx.script !== '', applyMs, state: next, changedChains: tx.changedChains.length, elementChanges: tx.elementChanges, cleanupFailed };
  }

  async #writeFull(next: TableState, opts: RenderOptions, signal: AbortSignal): Promise<number> {
    let carry;
    if (next.affinitySets.size) {
      // ClientIP stickiness lives in the affinity sets, which a full write recreates: carry
      // their live entries over.
      const live = await unlessNotFound(this.#o.nft.listJson(this.#o.table, signal));
      if (live) carry = affinityEntries(live);
    }
    const script = renderFull(next, opts, carry);
    const monitor = this.#o.monitor;
    monitor?.close();
    try {
      const t0 = this.#o.clock.monotonic();
      await this.#o.nft.apply(script, signal);
      return this.#o.clock.monotonic() - t0;
    } finally {
      if (!signal.aborted) monitor?.start();
    }
  }

  /**
   * Deletes the chains stale for the grace period, between syncs (the proxy's cleanup timer);
   * false when that failed (they are kept for later).
   */
  cleanup(signal: AbortSignal): Promise<boolean> {
    return this.#deleteStaleChains(this.#state?.chains ?? new Map(), signal);
  }

  /** Deletes the chains stale for the grace period; false when that failed (kept for later). */
  async #deleteStaleChains(inUse: ReadonlyMap<string, unknown>, signal: AbortSignal): Promise<boolean> {
    const now = this.#o.clock.monotonic();
    const due: string[] = [];
    for (const [chain, since] of this.#stale) {
      // A chain back in use is rewritten by this sync's transaction instead.
      if (inUse.has(chain)) this.#stale.delete(chain);
      else if (now - since >= STALE_CHAIN_GRACE_MS) due.push(chain);
    }
    if (!due.length) return true;
    try {
      await this.#o.nft.apply(renderStaleChainDeletes(due, this.#o.table), signal, (pid) => this.#o.monitor?.own(pid));
      for (const c of due) this.#stale.delete(c);
      this.#o.log.debug({ chains: due.length }, 'Deleted stale service proxy chains');
      return true;
    } catch (err) {
      if (signal.aborted) throw err;
      // Still referenced (an older kernel may lag) or a transient failure: retry in a later sync.
      for (const c of due) this.#stale.set(c, now);
      this.#o.log.warn({ err: describeError(err), chains: due.length }, 'Deleting stale service proxy chains failed, will retry');
      return false;
    }
  }
}
