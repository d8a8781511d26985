/**
 * One serialisation of an object for both its stored value and the reply to its create
 * (docs/performance.md "API server write path"): the fields are stringified once, then joined
 * as the store keeps them (metadata without resourceVersion) and, once the store has given the
 * object its resourceVersion, as the API serves it (apiVersion and kind first, as
 * `withTypeMeta`). Both texts are exactly what `JSON.stringify` of those two forms would give.
 */
import type { ApiObject } from './object.js';

export interface StoredJson {
  /** The stored value's text: `obj` with metadata.resourceVersion left out. */
  stored: string;
  /**
   * The served text with `metadata.resourceVersion` = `rv` appended to the metadata, where a
   * create sets it (admission removed any resourceVersion the client sent).
   */
  served(rv: string): string;
}

/** `"key":value` of one top-level field (undefined when JSON leaves the field out). */
function field(key: string, value: unknown): string | undefined {
  const text = JSON.stringify(value);
  return text === undefined ? undefined : `${JSON.stringify(key)}:${text}`;
}

/** Both texts of `obj` (see the file comment); `typeMeta` is what `withTypeMeta` would add. */
export function storedJson(obj: ApiObject, typeMeta: { apiVersion: string; kind: string }): StoredJson {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  const metaText = JSON.stringify(meta);
  const keys: string[] = [];
  const texts: string[] = [];
  for (const key of Object.keys(obj)) {
    const text = key === 'metadata' ? `"metadata":${metaText}` : field(key, obj[key]);
    if (text === undefined) continue;
    keys.push(key);
    texts.push(text);
  }
  return {
    stored: `{${texts.join(',')}}`,
    served(rv) {
      const own = (k: 'apiVersion' | 'kind'): unknown => (Object.hasOwn(obj, k) ? obj[k] : typeMeta[k]);
      const out = [field('apiVersion', own('apiVersion')), field('kind', own('kind'))].filter((t) => t !== undefined);
      const rvText = `"resourceVersion":${JSON.stringify(rv)}`;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        if (key === 'apiVersion' || key === 'kind') continue;
        out.push(key === 'metadata' ? `"metadata":${metaText === '{}' ? `{${rvText}}` : `${metaText.slice(0, -1)},${rvText}}`}` : texts[i]!);
      }
      return `{${out.join(',')}}`;
    },
  };
}
