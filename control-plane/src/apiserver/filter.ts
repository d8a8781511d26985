/**
 * The label/field selector filter of a list or watch request, compiled once per request. Which
 * fields a kind supports comes from its ResourceDef (unknown fields are a 400, as upstream).
 */
import { fieldValue, matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from '@nodelet/api';
import type { ApiObject } from './object.js';
import type { ResourceDef } from './resource.js';
import { badRequest } from './status.js';

export type ObjectFilter = (obj: ApiObject) => boolean;

/** The match-everything filter; lists with it may report remainingItemCount exactly. */
export const MATCH_ALL: ObjectFilter = () => true;

export function compileFilter(def: ResourceDef, labelSelector: string | null, fieldSelector: string | null): ObjectFilter {
  let labels: ReturnType<typeof parseLabelSelector> = [];
  let fields: ReturnType<typeof parseFieldSelector> = [];
  try {
    labels = parseLabelSelector(labelSelector ?? '');
    fields = parseFieldSelector(fieldSelector ?? '');
  } catch (err) {
    throw badRequest((err as Error).message);
  }
  const allowed = new Set(['metadata.name', 'metadata.namespace', ...(def.selectableFields ?? [])]);
  for (const f of fields) {
    if (!allowed.has(f.field)) throw badRequest(`field label not supported: ${f.field}`);
  }
  if (labels.length === 0 && fields.length === 0) return MATCH_ALL;
  return (obj) => matchLabels(labels, obj.metadata.labels) && matchFields(fields, (f) => fieldValueOf(obj, f));
}

/**
 * The value a field selector requires `field` to have exactly (`field=v` or `field==v`), if it
 * does; the watch cache files such a watcher under `v` (upstream's RequiresExactMatch). The
 * selector was validated by {@link compileFilter}.
 */
export function exactFieldValue(fieldSelector: string | null, field: string): string | undefined {
  if (!fieldSelector) return undefined;
  return parseFieldSelector(fieldSelector).find((r) => r.field === field && r.operator === '=')?.value;
}

/**
 * The value `field` must have when the selectors are that one requirement and nothing else
 * (`field=v`, no label selector): a watch can then judge an object by that field's value alone.
 */
export function onlyExactFieldValue(labelSelector: string | null, fieldSelector: string | null, field: string): string | undefined {
  if (labelSelector || !fieldSelector || parseFieldSelector(fieldSelector).length !== 1) return undefined;
  return exactFieldValue(fieldSelector, field);
}

function fieldValueOf(obj: ApiObject, field: string): string {
  // Events select on `source` = source.component (upstream's event field set).
  if (field === 'source') return fieldValue(obj, 'source.component');
  return fieldValue(obj, field);
}
