/**
 * Eviction thresholds (kubelet eviction/api/types.go and helpers.go ParseThresholdConfig): the
 * configuration's `evictionHard`, `evictionSoft` + `evictionSoftGracePeriod` and
 * `evictionMinimumReclaim` maps turned into one list, validated once at start (config/config.ts
 * calls {@link resolveEvictionConfig}). A threshold is always "signal < value": the node is under
 * pressure when what is available of a resource drops below it.
 */
import { AgentError, parseDuration } from '@nodelet/base';
import { parseQuantity } from '../util/quantity.js';

/** The eviction signals nodelet observes (allocatableMemory.available and containerfs.* are not). */
export const EVICTION_SIGNALS = ['memory.available', 'nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'pid.available'] as const;
export type EvictionSignal = (typeof EVICTION_SIGNALS)[number];

/** kubelet's DefaultEvictionHard on Linux (docs/reference/kubelet-behaviour.md §2.3). */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = {
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
};

/** An absolute amount (bytes, inodes, pids) or a fraction of the capacity in [0, 1]. */
export type ThresholdValue = { quantity: number; percentage?: undefined } | { percentage: number; quantity?: undefined };

export interface Threshold {
  signal: EvictionSignal;
  value: ThresholdValue;
  /** 0 for a hard threshold; a soft one must be met this long before pods are evicted. */
  gracePeriodMs: number;
  /** Once met, the threshold stays met until this much more than the threshold is available again. */
  minReclaim?: ThresholdValue;
  /** The text of the value as configured ("100Mi", "10%"), for logs. */
  raw: string;
}

export interface EvictionConfig {
  /** Hard thresholds as configured (node-status.ts takes memory and nodefs out of allocatable). */
  evictionHard: Record<string, string>;
  /** Hard and soft thresholds, each with its grace period and minimum reclaim. */
  evictionThresholds: Threshold[];
  /** How long a pressure condition stays True after its threshold was last met (kubelet: 5m). */
  evictionPressureTransitionPeriodMs: number;
  /** The grace period, in seconds, of pods evicted for a soft threshold (kubelet: 0). */
  evictionMaxPodGracePeriodS: number;
}

/** What the configuration file may hold (kubelet.config.k8s.io/v1beta1 field names). */
export interface EvictionConfigFile {
  evictionHard?: Record<string, string>;
  evictionSoft?: Record<string, string>;
  evictionSoftGracePeriod?: Record<string, string>;
  evictionPressureTransitionPeriod?: string;
  evictionMinimumReclaim?: Record<string, string>;
  evictionMaxPodGracePeriod?: number;
}

function invalid(field: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `invalid agent config: ${field}: ${why}`);
}

/** `"10%"` or a quantity; undefined for a zero value, which disables the threshold as in kubelet. */
export function parseThresholdValue(field: string, v: unknown): ThresholdValue | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') throw invalid(field, `must be a quantity or a percentage, got ${JSON.stringify(v)}`);
  const s = String(v).trim();
  if (s.endsWith('%')) {
    const p = Number(s.slice(0, -1));
    if (s.length === 1 || !(p >= 0 && p <= 100)) throw invalid(field, `percentage out of range: ${s}`);
    return p === 0 ? undefined : { percentage: p / 100 };
  }
  let q: number;
  try {
    q = parseQuantity(s);
  } catch {
    throw invalid(field, `must be a quantity or a percentage, got ${JSON.stringify(v)}`);
  }
  if (q < 0) throw invalid(field, `must be positive, got ${JSON.stringify(v)}`);
  return q === 0 ? undefined : { quantity: q };
}

/** The threshold's amount on a resource of `capacity` (kubelet GetThresholdQuantity: a percentage is truncated). */
export function thresholdAmount(value: ThresholdValue, capacity: number): number {
  return value.percentage !== undefined ? Math.trunc(capacity * value.percentage) : value.quantity;
}

function signalMap(field: string, v: unknown): Map<EvictionSignal, unknown> {
  const out = new Map<EvictionSignal, unknown>();
  if (v === undefined || v === null) return out;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalid(field, 'must be a map like {"memory.available": "100Mi"}');
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (!(EVICTION_SIGNALS as readonly string[]).includes(k)) throw invalid(`${field}.${k}`, `unknown eviction signal (use ${EVICTION_SIGNALS.join(', ')})`);
    out.set(k as EvictionSignal, x);
  }
  return out;
}

function durationOf(field: string, v: unknown): number {
  let ms = NaN;
  if (typeof v === 'string') {
    try {
      ms = parseDuration(v, { bare: 'reject' });
    } catch {
      ms = NaN;
    }
  }
  if (!(ms >= 0)) throw invalid(field, `must be a duration like "1m30s", got ${JSON.stringify(v)}`);
  return ms;
}

/**
 * Validates and resolves the eviction fields. As in kubelet, an `evictionHard` map replaces the
 * defaults as a whole; a zero threshold ("0%", "0") disables its signal; every soft threshold
 * needs a positive grace period; a grace period or minimum reclaim must name a configured signal.
 */
export function resolveEvictionConfig(file: EvictionConfigFile): EvictionConfig {
  const hard = signalMap('evictionHard', file.evictionHard ?? DEFAULT_EVICTION_HARD);
  const soft = signalMap('evictionSoft', file.evictionSoft);
  const grace = signalMap('evictionSoftGracePeriod', file.evictionSoftGracePeriod);
  const reclaim = signalMap('evictionMinimumReclaim', file.evictionMinimumReclaim);
  const minReclaim = new Map<EvictionSignal, ThresholdValue | undefined>();
  for (const [s, v] of reclaim) {
    if (!hard.has(s) && !soft.has(s)) throw invalid(`evictionMinimumReclaim.${s}`, 'no evictionHard or evictionSoft threshold for this signal');
    minReclaim.set(s, parseThresholdValue(`evictionMinimumReclaim.${s}`, v));
  }
  for (const s of grace.keys()) if (!soft.has(s)) throw invalid(`evictionSoftGracePeriod.${s}`, 'no evictionSoft threshold for this signal');
  const thresholds: Threshold[] = [];
  const evictionHard: Record<string, string> = {};
  for (const [s, v] of hard) {
    const value = parseThresholdValue(`evictionHard.${s}`, v);
    evictionHard[s] = String(v);
    if (value) thresholds.push({ signal: s, value, gracePeriodMs: 0, minReclaim: minReclaim.get(s), raw: String(v) });
  }
  for (const [s, v] of soft) {
    const value = parseThresholdValue(`evictionSoft.${s}`, v);
    const g = grace.has(s) ? durationOf(`evictionSoftGracePeriod.${s}`, grace.get(s)) : 0;
    if (g <= 0) throw invalid(`evictionSoftGracePeriod.${s}`, 'a soft eviction threshold needs a positive grace period');
    if (value) thresholds.push({ signal: s, value, gracePeriodMs: g, minReclaim: minReclaim.get(s), raw: String(v) });
  }
  const transition = file.evictionPressureTransitionPeriod === undefined ? 5 * 60_000 : durationOf('evictionPressureTransitionPeriod', file.evictionPressureTransitionPeriod);
  const maxGrace = file.evictionMaxPodGracePeriod ?? 0;
  if (!Number.isInteger(maxGrace) || maxGrace < 0) throw invalid('evictionMaxPodGracePeriod', `must be an integer >= 0 (seconds), got ${JSON.stringify(maxGrace)}`);
  return { evictionHard, evictionThresholds: thresholds, evictionPressureTransitionPeriodMs: transition, evictionMaxPodGracePeriodS: maxGrace };
}
