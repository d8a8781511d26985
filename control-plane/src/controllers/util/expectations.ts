/**
 * Controller expectations (upstream `ControllerExpectations`): after a sync creates or deletes N
 * pods, the next sync of that owner waits until the informer has observed them, so a stale cache
 * never causes a second round of creates. Expectations expire after 5 minutes in case a watch
 * event was lost.
 */
import type { Clock } from '@nodelet/base';

export const EXPECTATIONS_TTL_MS = 5 * 60_000;

interface Expectation {
  add: number;
  del: number;
  at: number;
}

export class Expectations {
  readonly #m = new Map<string, Expectation>();
  constructor(private readonly clock: Clock) {}

  expect(key: string, add: number, del: number): void {
    this.#m.set(key, { add, del, at: this.clock.now() });
  }

  observedAdd(key: string): void {
    const e = this.#m.get(key);
    if (e) e.add--;
  }

  observedDelete(key: string): void {
    const e = this.#m.get(key);
    if (e) e.del--;
  }

  /** A create or delete call failed: the informer will never see it, stop waiting for one. */
  lowerAdd(key: string, n = 1): void {
    const e = this.#m.get(key);
    if (e) e.add -= n;
  }

  lowerDelete(key: string, n = 1): void {
    const e = this.#m.get(key);
    if (e) e.del -= n;
  }

  /** True when the owner may sync: nothing outstanding, or the expectation timed out. */
  satisfied(key: string): boolean {
    const e = this.#m.get(key);
    if (!e) return true;
    if (e.add <= 0 && e.del <= 0) return true;
    return this.clock.now() - e.at > EXPECTATIONS_TTL_MS;
  }

  forget(key: string): void {
    this.#m.delete(key);
  }
}
