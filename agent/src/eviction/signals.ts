/**
 * Eviction signals and the pure rules over them (kubelet eviction/helpers.go): what the stats
 * collector's Summary says is available of each resource, which thresholds that meets, and the
 * node conditions that follow. The manager (eviction-manager.ts) keeps the state between rounds.
 *
 *   memory.available   node memory: capacity − working set (capacity = available + working set)
 *   nodefs.*           statfs of the agent's root dir (Summary node.fs)
 *   imagefs.*          the runtime's image filesystem (Summary node.runtime.imageFs)
 *   pid.available      pid_max − threads running (Summary node.rlimit)
 */
import type { Summary } from '../stats/types.js';
import { thresholdAmount, type EvictionSignal, type Threshold } from './thresholds.js';

export interface Observation {
  available: number;
  capacity: number;
  /** When the numbers were measured (ms). */
  timeMs: number;
}

export type Observations = Map<EvictionSignal, Observation>;

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';

/** The node condition each signal drives (kubelet signalToNodeCondition). */
export const SIGNAL_CONDITION: Readonly<Record<EvictionSignal, PressureCondition>> = {
  'memory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** The resource each signal reclaims, as the eviction message names it (kubelet signalToResource). */
export const SIGNAL_RESOURCE: Readonly<Record<EvictionSignal, 'memory' | 'ephemeral-storage' | 'inodes' | 'pids'>> = {
  'memory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

/** The signals the Summary has numbers for; a signal whose numbers are missing is not observed (and never met). */
export function observe(s: Summary): Observations {
  const out: Observations = new Map();
  const at = (t: string | undefined): number => (t ? Date.parse(t) : NaN);
  const put = (sig: EvictionSignal, available: number | undefined, capacity: number | undefined, time: string | undefined): void => {
    if (available === undefined || capacity === undefined || !(capacity > 0)) return;
    out.set(sig, { available, capacity, timeMs: at(time) });
  };
  const mem = s.node.memory;
  if (mem?.availableBytes !== undefined && mem.workingSetBytes !== undefined) put('memory.available', mem.availableBytes, mem.availableBytes + mem.workingSetBytes, mem.time);
  const fs = s.node.fs;
  put('nodefs.available', fs?.availableBytes, fs?.capacityBytes, fs?.time);
  put('nodefs.inodesFree', fs?.inodesFree, fs?.inodes, fs?.time);
  const img = s.node.runtime?.imageFs;
  put('imagefs.available', img?.availableBytes, img?.capacityBytes, img?.time);
  put('imagefs.inodesFree', img?.inodesFree, img?.inodes, img?.time);
  const r = s.node.rlimit;
  if (r?.maxpid !== undefined && r.curproc !== undefined) put('pid.available', r.maxpid - r.curproc, r.maxpid, r.time);
  return out;
}

/**
 * The thresholds whose signal is below them. With `enforceMinReclaim` (thresholds met in the
 * previous round) a threshold stays met until its minimum reclaim is available on top of it.
 */
export function thresholdsMet(thresholds: readonly Threshold[], obs: Observations, enforceMinReclaim: boolean): Threshold[] {
  return thresholds.filter((t) => {
    const o = obs.get(t.signal);
    if (!o) return false;
    const extra = enforceMinReclaim && t.minReclaim ? thresholdAmount(t.minReclaim, o.capacity) : 0;
    return o.available < thresholdAmount(t.value, o.capacity) + extra;
  });
}

/** Thresholds whose signal has numbers newer than in the last round (kubelet thresholdsUpdatedStats): stale numbers evict nobody. */
export function thresholdsUpdatedStats(thresholds: readonly Threshold[], obs: Observations, last: Observations | undefined): Threshold[] {
  return thresholds.filter((t) => {
    const o = obs.get(t.signal);
    const prev = last?.get(t.signal);
    return !!o && (!prev || !(o.timeMs <= prev.timeMs));
  });
}

/** Identity of a threshold across rounds. */
export function thresholdKey(t: Threshold): string {
  return `${t.signal}|${t.gracePeriodMs > 0 ? 'soft' : 'hard'}`;
}

/** When each met threshold was first seen met: the earlier time is kept, thresholds no longer met are dropped. */
export function thresholdsFirstObservedAt(met: readonly Threshold[], previous: ReadonlyMap<string, number>, now: number): Map<string, number> {
  return new Map(met.map((t) => [thresholdKey(t), previous.get(thresholdKey(t)) ?? now]));
}

/** The met thresholds whose grace period has passed (a hard one at once). */
export function thresholdsMetGracePeriod(met: readonly Threshold[], firstObserved: ReadonlyMap<string, number>, now: number): Threshold[] {
  return met.filter((t) => now - (firstObserved.get(thresholdKey(t)) ?? now) >= t.gracePeriodMs);
}

/** The conditions the met thresholds put the node in (a soft threshold counts before its grace period ends). */
export function nodeConditions(met: readonly Threshold[]): Set<PressureCondition> {
  return new Set(met.map((t) => SIGNAL_CONDITION[t.signal]));
}

/**
 * Conditions that hold: those seen within the transition period (kubelet
 * nodeConditionsObservedSince), so a node hovering at a threshold does not flap.
 */
export function conditionsObservedSince(lastObserved: ReadonlyMap<PressureCondition, number>, periodMs: number, now: number): Set<PressureCondition> {
  return new Set([...lastObserved].filter(([, at]) => now - at < periodMs).map(([c]) => c));
}

/** Memory first, then the rest in configuration order (kubelet byEvictionPriority puts memory ahead of everything). */
export function byEvictionPriority(thresholds: readonly Threshold[]): Threshold[] {
  const rank = (t: Threshold): number => (t.signal === 'memory.available' ? 0 : 1);
  return [...thresholds].sort((a, b) => rank(a) - rank(b));
}
