/**
 * What a Pod Security check is (upstream policy.Check): a function of a pod's metadata and spec
 * per policy version, and the helpers every check formats its message with. Messages, field
 * names and allowed values are upstream's; docs/security.md "Pod Security" lists the checks.
 */
import { isPlainObject, type Json } from '../../object.js';

export interface PodMeta {
  annotations?: Record<string, string>;
}

/** The annotations of an object's or template's `metadata` (string values only: what the checks read). */
export function podMetaOf(metadata: unknown): PodMeta {
  const annotations = isPlainObject(metadata) && isPlainObject(metadata.annotations) ? metadata.annotations : undefined;
  if (!annotations) return {};
  return { annotations: Object.fromEntries(Object.entries(annotations).filter((e): e is [string, string] => typeof e[1] === 'string')) };
}

/** Allowed, or the short reason and the detail upstream prints as `reason (detail)`. */
export type CheckResult = { allowed: true } | { allowed: false; reason: string; detail: string };

export type CheckFn = (meta: PodMeta, spec: Json) => CheckResult;

export interface VersionedCheck {
  /** The first v1.<minor> policy this variant applies to. */
  minVersion: number;
  check: CheckFn;
  /** Baseline checks this restricted one replaces. */
  overrides?: readonly string[];
}

export interface Check {
  id: string;
  level: 'baseline' | 'restricted';
  /** Strictly increasing by minVersion. */
  versions: readonly VersionedCheck[];
}

export const ALLOWED: CheckResult = { allowed: true };

export function forbid(reason: string, detail: string): CheckResult {
  return { allowed: false, reason, detail };
}

/** `"a", "b"`. */
export function joinQuote(items: readonly string[]): string {
  return items.length ? `"${items.join('", "')}"` : '';
}

export function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}

/** `container "a"` / `containers "a", "b"`. */
export function containersPhrase(names: readonly string[]): string {
  return `${pluralize('container', 'containers', names.length)} ${joinQuote(names)}`;
}

/** Sorted unique values, as upstream's sets.String.List(). */
export function sortedSet(values: Iterable<string>): string[] {
  return [...new Set(values)].sort();
}

const list = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);

/** Init containers, containers, then ephemeral containers (upstream visitContainers). */
export function allContainers(spec: Json): Json[] {
  return [...list(spec.initContainers), ...list(spec.containers), ...list(spec.ephemeralContainers)];
}

export const nameOf = (c: Json): string => (typeof c.name === 'string' ? c.name : '');

/** `o.securityContext` when it is an object. */
export function securityContextOf(o: Json): Json | undefined {
  return isPlainObject(o.securityContext) ? o.securityContext : undefined;
}

/** `o[key]` when it is an object. */
export function objectField(o: Json | undefined, key: string): Json | undefined {
  const v = o?.[key];
  return isPlainObject(v) ? v : undefined;
}

/** Pods with `spec.os.name: windows` skip the Linux-only restricted checks from v1.25. */
export function isWindowsPod(spec: Json): boolean {
  return objectField(spec, 'os')?.name === 'windows';
}

/** `pod and containers "a"`: the setters upstream names, joined with " and ". */
export function setters(pod: boolean, containers: readonly string[]): string[] {
  return [...(pod ? ['pod'] : []), ...(containers.length ? [containersPhrase(containers)] : [])];
}

/** Go's %q for the strings these messages quote (printable ASCII the same as JSON). */
export const goQuote = (s: string): string => JSON.stringify(s);
