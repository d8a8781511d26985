/**
 * A fake of logind at the process boundary (what @nodelet/systemd's logindInhibitor talks to):
 * it records locks and delay changes, and lets a test send PrepareForShutdown or end the watch.
 */
import { AgentError } from '@nodelet/base';
import type { InhibitLock, ShutdownInhibitor, ShutdownWatch } from '@nodelet/systemd';

export class FakeInhibitor implements ShutdownInhibitor {
  /** logind's InhibitDelayMaxSec in ms (logind's default is 5 s). */
  delayMaxMs = 5000;
  /** When set, raiseInhibitDelay fails with it (a read-only /etc). */
  raiseError?: Error;
  /** When true every call fails as without a system bus. */
  unavailable = false;
  /** What happened, in order: 'inhibit', 'release', 'raise:<ms>', 'watch'. */
  readonly calls: string[] = [];
  #held = 0;
  #listeners = new Set<(b: boolean) => void>();
  #endWatch?: () => void;

  /** Locks held now. */
  get held(): number {
    return this.#held;
  }

  #check(): void {
    if (this.unavailable) throw new AgentError('ERR_UNAVAILABLE', 'no system bus at "/run/dbus/system_bus_socket"');
  }

  async inhibitDelayMaxMs(): Promise<number> {
    this.#check();
    return this.delayMaxMs;
  }

  async raiseInhibitDelay(ms: number): Promise<void> {
    this.#check();
    this.calls.push(`raise:${ms}`);
    if (this.raiseError) throw this.raiseError;
    this.delayMaxMs = ms;
  }

  async inhibit(): Promise<InhibitLock> {
    this.#check();
    this.calls.push('inhibit');
    this.#held++;
    let released = false;
    let gone!: () => void;
    const p = new Promise<void>((r) => (gone = r));
    return {
      gone: p,
      release: async () => {
        if (released) return;
        released = true;
        this.#held--;
        this.calls.push('release');
        gone();
      },
    };
  }

  async watchShutdown(onEvent: (b: boolean) => void): Promise<ShutdownWatch> {
    this.#check();
    this.calls.push('watch');
    this.#listeners.add(onEvent);
    const ended = new Promise<void>((r) => (this.#endWatch = r));
    return {
      ended,
      close: () => {
        this.#listeners.delete(onEvent);
        this.#endWatch?.();
      },
    };
  }

  /** logind's PrepareForShutdown(active) signal. */
  prepareForShutdown(active: boolean): void {
    for (const l of this.#listeners) l(active);
  }

  /** The bus went away: the watch ends. */
  endWatch(): void {
    this.#listeners.clear();
    this.#endWatch?.();
  }
}
