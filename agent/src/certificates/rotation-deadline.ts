/**
 * When to renew a credential, and how to wait for it on an injected clock.
 *
 * kubelet's certificate manager renews at a random point between 70 % and 90 % of the
 * validity period (its "rotation deadline"): early enough that a failing signer leaves weeks
 * to notice, spread out so a fleet issued at once does not renew at once.
 */
import type { Clock } from '@nodelet/base';

/** Timers are re-armed at most this far ahead: setTimeout overflows past 2^31-1 ms (24.8 days). */
export const MAX_TIMER_MS = 3600_000;

/** `notBefore + (0.7 + 0.2·r) · (notAfter − notBefore)`, r = `random()` ∈ [0, 1). */
export function rotationDeadline(notBefore: number, notAfter: number, random: () => number): number {
  return Math.round(notBefore + (notAfter - notBefore) * (0.7 + 0.2 * random()));
}

/**
 * Resolves once `clock.now() >= at`, re-arming in steps of at most `stepMs` (so wall-clock jumps
 * and suspends are noticed within a step), or rejects with the signal's reason.
 */
export async function sleepUntil(clock: Clock, at: number, signal: AbortSignal, stepMs = MAX_TIMER_MS): Promise<void> {
  while (clock.now() < at) await clock.sleep(Math.min(at - clock.now(), stepMs), signal);
}
