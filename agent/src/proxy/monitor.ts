/**
 * Drift detection without reading the table back: a long-lived `nft monitor` in the proxy's
 * network namespace prints every committed change of any table, one line per object, each batch
 * closed by `# new generation <n> by process <pid> (<comm>)`. A batch that touched our table and
 * was not committed by one of the proxy's own `nft -f` processes is drift. Its cost is nothing
 * while the table is left alone, whatever its size (reading 5,000 Services' table back takes
 * seconds; docs/services.md "Drift"). The kernel's own affinity-set updates are not
 * transactions and print nothing.
 *
 *   start() ─▶ nft monitor running ──line──▶ parse ──(foreign batch on our table)──▶ onDrift()
 *                     │
 *                     └─exits/fails──▶ onExit()   (the proxy restarts it and rewrites the table:
 *                                                   changes while it was down went unseen)
 *
 * A change made between the monitor's start and its subscription in the kernel (a few
 * milliseconds) can be missed; the proxy writes the whole table after every start, so only a
 * change in that window after that write would be.
 */
import { describeError, isAbortError, type Logger } from '@nodelet/base';
import type { CommandRunner } from './exec.js';

/** How many of our own nft process IDs are remembered until their batch is seen. */
const OWN_PIDS = 256;
const GENERATION = /^# new generation \d+ by process (\d+) /;

export interface TableMonitorOptions {
  runner: CommandRunner;
  table: string;
  log: Logger;
  /** A foreign batch changed the table (called once per batch). */
  onDrift: (by: { pid: number; comm: string }) => void;
  /** The monitor ended on its own (not through `close`). */
  onExit: () => void;
}

export class TableMonitor {
  readonly #o: TableMonitorOptions;
  readonly #own = new Set<number>();
  #stop: AbortController | undefined;
  #running = false;
  #touched = false;

  constructor(o: TableMonitorOptions) {
    this.#o = o;
  }

  /** True while `nft monitor` runs. */
  get running(): boolean {
    return this.#running;
  }

  /** Starts `nft monitor` unless it runs. Returns at once; failures reach `onExit`. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#touched = false;
    const stop = (this.#stop = new AbortController());
    this.#o.runner
      .stream(['nft', 'monitor'], { signal: stop.signal, onLine: (l) => this.#line(l) })
      .then(
        (code) => this.#o.log.warn({ code }, 'nft monitor exited; the service proxy table will be rewritten'),
        (err: unknown) => {
          if (!isAbortError(err)) this.#o.log.warn({ err: describeError(err) }, 'nft monitor failed; the service proxy table will be rewritten');
        },
      )
      .finally(() => {
        if (this.#stop !== stop) return;
        this.#running = false;
        if (!stop.signal.aborted) this.#o.onExit();
      });
  }

  /** Marks `pid` as one of the proxy's own nft transactions (from `CommandRunner.run`'s `onSpawn`). */
  own(pid: number): void {
    if (this.#own.size >= OWN_PIDS) this.#own.delete(this.#own.values().next().value!);
    this.#own.add(pid);
  }

  /** Stops the monitor. Idempotent. */
  close(): void {
    this.#stop?.abort();
    this.#running = false;
  }

  #line(line: string): void {
    // nft's socket overflowed and events were dropped: one of them may have been someone else's.
    if (line.startsWith('# ERROR: We lost some netlink events')) {
      this.#o.onDrift({ pid: 0, comm: 'lost events' });
      return;
    }
    const gen = GENERATION.exec(line);
    if (gen) {
      const pid = Number(gen[1]);
      const ours = this.#own.delete(pid);
      if (this.#touched && !ours) this.#o.onDrift({ pid, comm: /\(([^)]*)\)\s*$/.exec(line)?.[1] ?? '' });
      this.#touched = false;
      return;
    }
    // `<verb> <object> ip <table> …`, e.g. `delete rule ip nodelet-proxy services handle 4`.
    const words = line.split(' ', 4);
    if (words[2] === 'ip' && words[3] === this.#o.table) this.#touched = true;
  }
}
