// What the codec needs to know about a schema type beyond protobufjs' reflection.
import protobuf from 'protobufjs';

/**
 * A type's fully qualified name, cached: protobufjs computes `fullName` by walking the parents on
 * every read, which was most of the codec's time.
 */
const FULL_NAMES = new WeakMap<protobuf.Type, string>();
export function fullNameOf(type: protobuf.Type): string {
  let name = FULL_NAMES.get(type);
  if (name === undefined) {
    name = type.fullName;
    FULL_NAMES.set(type, name);
  }
  return name;
}

/**
 * Fields Go embeds (JSON inlines the struct's fields into the parent) but protobuf nests as a
 * message: the key selectors' and sources' LocalObjectReference, Probe's handler, Volume's source.
 */
export const INLINE_FIELDS: ReadonlySet<string> = new Set(['localObjectReference', 'handler', 'volumeSource', 'ingressRuleValue']);

/** Whether `field` is one of the {@link INLINE_FIELDS} (a message field of that name, not a string like RuntimeClass.handler). */
export function isInlined(field: protobuf.Field): boolean {
  return INLINE_FIELDS.has(field.name) && field.resolvedType instanceof protobuf.Type && !field.repeated && !field.map;
}

