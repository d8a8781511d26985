/**
 * Label and field selectors, in the string syntax of `?labelSelector=` / `?fieldSelector=`
 * (k8s.io/apimachinery/pkg/labels and pkg/fields). Pure functions: the API server filters lists
 * and watches with them, clients build query strings with them.
 */
import { AgentError } from '@nodelet/base';
import type { LabelSelector } from './types/meta.js';

export type LabelOperator = 'Exists' | 'DoesNotExist' | 'Equals' | 'NotEquals' | 'In' | 'NotIn' | 'Gt' | 'Lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** One value for Equals/NotEquals/Gt/Lt, one or more for In/NotIn, none for Exists/DoesNotExist. */
  readonly values: readonly string[];
}

/** A parsed label selector: all requirements must hold (AND). Empty = everything. */
export type ParsedLabelSelector = readonly LabelRequirement[];

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function invalid(selector: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `unable to parse requirement in selector "${selector}": ${why}`);
}

/** Validates a label key: `[prefix/]name`, prefix a DNS subdomain ≤ 253, name ≤ 63. */
export function isValidLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && NAME.test(name);
}

/** Validates a label value: empty, or ≤ 63 characters of `[A-Za-z0-9_.-]` starting and ending alphanumeric. */
export function isValidLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && NAME.test(value));
}

/** Splits on commas that are not inside `( … )`. */
function splitTerms(s: string, selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth < 0) throw invalid(selector, 'unbalanced ")"');
    } else if (c === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw invalid(selector, 'missing ")"');
  out.push(s.slice(start));
  return out;
}

const SET_TERM = /^(\S+)\s+(in|notin)\s*\((.*)\)$/;
const CMP_TERM = /^([^=!<>\s]+)\s*(==|!=|=|>|<)\s*(.*)$/;

function parseTerm(raw: string, selector: string): LabelRequirement {
  const term = raw.trim();
  if (term === '') throw invalid(selector, 'empty requirement');
  let req: LabelRequirement;
  const set = SET_TERM.exec(term);
  const cmp = set ? null : CMP_TERM.exec(term);
  if (set) {
    const values = (set[3] ?? '').split(',').map((v) => v.trim());
    if (values.length === 0 || (values.length === 1 && values[0] === '')) throw invalid(selector, `"${term}": a set needs at least one value`);
    req = { key: set[1] ?? '', operator: set[2] === 'in' ? 'In' : 'NotIn', values };
  } else if (cmp) {
    const op = cmp[2];
    const operator: LabelOperator = op === '!=' ? 'NotEquals' : op === '>' ? 'Gt' : op === '<' ? 'Lt' : 'Equals';
    req = { key: cmp[1] ?? '', operator, values: [(cmp[3] ?? '').trim()] };
    if ((operator === 'Gt' || operator === 'Lt') && !/^-?[0-9]+$/.test(req.values[0] ?? '')) {
      throw invalid(selector, `"${term}": ${op} needs an integer value`);
    }
  } else if (term.startsWith('!')) {
    req = { key: term.slice(1).trim(), operator: 'DoesNotExist', values: [] };
  } else {
    req = { key: term, operator: 'Exists', values: [] };
  }
  if (!isValidLabelKey(req.key)) throw invalid(selector, `invalid label key "${req.key}"`);
  for (const v of req.values) {
    if (req.operator !== 'Gt' && req.operator !== 'Lt' && !isValidLabelValue(v)) throw invalid(selector, `invalid label value "${v}"`);
  }
  return req;
}

/**
 * Parses `app=web,tier!=db,env in (prod,staging),!canary,track`. Throws ERR_INVALID_ARGUMENT
 * with the offending term. `''` parses to the empty selector (matches everything).
 */
export function parseLabelSelector(selector: string): ParsedLabelSelector {
  if (selector.trim() === '') return [];
  return Object.freeze(splitTerms(selector, selector).map((t) => Object.freeze(parseTerm(t, selector))));
}

/** Converts the structured form (Deployment/ReplicaSet `spec.selector`) to requirements. */
export function labelSelectorFromObject(sel: LabelSelector | undefined): ParsedLabelSelector {
  if (!sel) return [];
  const reqs: LabelRequirement[] = [];
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) reqs.push({ key, operator: 'Equals', values: [value] });
  for (const e of sel.matchExpressions ?? []) {
    const operator: LabelOperator = e.operator;
    if ((operator === 'In' || operator === 'NotIn') && !(e.values?.length)) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `label selector expression on "${e.key}": ${operator} needs values`);
    }
    reqs.push({ key: e.key, operator, values: operator === 'Exists' || operator === 'DoesNotExist' ? [] : [...(e.values ?? [])] });
  }
  return Object.freeze(reqs);
}

/** True when `labels` satisfy every requirement (a missing label satisfies `!=` and `notin`, as upstream). */
export function matchLabels(selector: ParsedLabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const l = labels ?? {};
  for (const r of selector) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const v = has ? l[r.key] : undefined;
    switch (r.operator) {
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      case 'Equals': case 'In': if (v === undefined || !r.values.includes(v)) return false; break;
      case 'NotEquals': case 'NotIn': if (v !== undefined && r.values.includes(v)) return false; break;
      case 'Gt': case 'Lt': {
        if (v === undefined || !/^-?[0-9]+$/.test(v)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        if (r.operator === 'Gt' ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

/** The string form (`Scale.status.selector`, query strings); stable order as given. */
export function formatLabelSelector(selector: ParsedLabelSelector): string {
  return selector
    .map((r) => {
      switch (r.operator) {
        case 'Exists': return r.key;
        case 'DoesNotExist': return `!${r.key}`;
        case 'Equals': return `${r.key}=${r.values[0] ?? ''}`;
        case 'NotEquals': return `${r.key}!=${r.values[0] ?? ''}`;
        case 'In': return `${r.key} in (${r.values.join(',')})`;
        case 'NotIn': return `${r.key} notin (${r.values.join(',')})`;
        case 'Gt': return `${r.key}>${r.values[0] ?? ''}`;
        case 'Lt': return `${r.key}<${r.values[0] ?? ''}`;
      }
    })
    .join(',');
}

// ---- field selectors -------------------------------------------------------------------------

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export type ParsedFieldSelector = readonly FieldRequirement[];

/**
 * Parses `spec.nodeName=node-1,status.phase!=Succeeded` (`==` is the same as `=`). Values may
 * escape `\,` `\=` `\\` as upstream's `fields.EscapeValue` writes them. `''` matches everything.
 */
export function parseFieldSelector(selector: string): ParsedFieldSelector {
  if (selector.trim() === '') return [];
  const reqs: FieldRequirement[] = [];
  for (const term of splitEscaped(selector)) {
    const m = /^([^=!\s]+)\s*(==|!=|=)(.*)$/s.exec(term.raw);
    if (!m || m[1] === undefined) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `invalid field selector "${selector}": "${term.raw}" is not of the form field=value or field!=value`);
    }
    const value = unescapeFieldValue(m[3] ?? '', selector);
    reqs.push(Object.freeze({ field: m[1], operator: m[2] === '!=' ? '!=' : '=', value }));
  }
  return Object.freeze(reqs);
}

/** Splits on unescaped commas, keeping escapes for the value decoder. */
function splitEscaped(s: string): Array<{ raw: string }> {
  const out: Array<{ raw: string }> = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === ',') {
      out.push({ raw: cur.trim() });
      cur = '';
    } else cur += c;
  }
  out.push({ raw: cur.trim() });
  return out;
}

function unescapeFieldValue(v: string, selector: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (c === '\\') {
      const n = v[i + 1];
      if (n !== '\\' && n !== ',' && n !== '=') {
        throw new AgentError('ERR_INVALID_ARGUMENT', `invalid field selector "${selector}": invalid escape sequence in "${v}"`);
      }
      out += n;
      i++;
    } else if (c === '=' || c === ',') {
      throw new AgentError('ERR_INVALID_ARGUMENT', `invalid field selector "${selector}": unescaped "${c}" in value "${v}"`);
    } else out += c;
  }
  return out;
}

/** Escapes a value for a field selector string. */
export function escapeFieldValue(v: string): string {
  return v.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/** Builds `a=b,c=d` from an object (the usual client side: `{ 'spec.nodeName': node }`). */
export function formatFieldSelector(fields: Readonly<Record<string, string>> | ParsedFieldSelector): string {
  const reqs: readonly FieldRequirement[] = Array.isArray(fields)
    ? (fields as ParsedFieldSelector)
    : Object.entries(fields as Record<string, string>).map(([field, value]) => ({ field, operator: '=' as const, value }));
  return reqs.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
}

/**
 * True when every requirement holds. `fields` maps a field path to its value (a missing field
 * counts as `''`), or is a lookup function. Which fields a kind supports is the server's business.
 */
export function matchFields(
  selector: ParsedFieldSelector,
  fields: Readonly<Record<string, string>> | ((field: string) => string | undefined),
): boolean {
  const get = typeof fields === 'function' ? fields : (f: string) => fields[f];
  for (const r of selector) {
    const v = get(r.field) ?? '';
    if (r.operator === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}

/**
 * Reads a dotted path from an object as a field-selector value: strings as is, numbers and
 * booleans stringified, anything missing or structured as `''`. (`spec.nodeName`, `involvedObject.uid`.)
 */
export function fieldValue(obj: unknown, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (typeof cur === 'string') return cur;
  if (typeof cur === 'number' || typeof cur === 'boolean') return String(cur);
  return '';
}
