/**
 * The last {@link MachineInfo}, refreshed in the background so a node status update never waits
 * for it: `load()` once at start (registration needs it), then `current` synchronously; a
 * refresh every `refreshMs` (default 10 min — CPUs, memory and the OS change only with a reboot
 * or hotplug) replaces it when it succeeds and keeps the old facts when it does not.
 */
import { describeError, type Clock, type Logger, type PeriodicJob } from '@nodelet/base';
import { readMachineInfo, type MachineInfo } from './machine-info.js';

export const MACHINE_INFO_REFRESH_MS = 10 * 60_000;

export class MachineInfoCache {
  readonly #o: { rootDir: string; clock: Clock; log: Logger; refreshMs?: number; read?: (rootDir: string) => Promise<MachineInfo> };
  #current?: MachineInfo;
  #loading?: Promise<MachineInfo>;

  constructor(o: { rootDir: string; clock: Clock; log: Logger; refreshMs?: number; read?: (rootDir: string) => Promise<MachineInfo> }) {
    this.#o = o;
  }

  /** The facts, read now if never read (concurrent callers share one read). */
  load(): Promise<MachineInfo> {
    if (this.#current) return Promise.resolve(this.#current);
    this.#loading ??= (this.#o.read ?? readMachineInfo)(this.#o.rootDir).then(
      (m) => (this.#current = m),
      (err: unknown) => {
        this.#loading = undefined;
        throw err;
      },
    );
    return this.#loading;
  }

  get current(): MachineInfo | undefined {
    return this.#current;
  }

  /** Starts the periodic refresh until `signal` aborts; the returned job's `stopped` says when it has. */
  start(signal: AbortSignal): PeriodicJob {
    return this.#o.clock.every(
      this.#o.refreshMs ?? MACHINE_INFO_REFRESH_MS,
      async () => {
        this.#current = await (this.#o.read ?? readMachineInfo)(this.#o.rootDir);
      },
      { signal, onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'Machine info refresh failed; keeping the last facts') },
    );
  }
}
