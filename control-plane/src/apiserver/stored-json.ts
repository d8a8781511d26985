/**
 * One serialisation of an object for both its stored value and the reply to its create
 * (docs/performance.md "API server write path"). An object laid out as clients send it and
 * admission keeps it — `apiVersion`, `kind`, `metadata`, then the rest — is stringified in two
 * parts, its metadata and the rest, once: the stored text joins them with metadata.resourceVersion
 * left out, the served text (once the store has given the object its resourceVersion) joins them
 * with it appended to the metadata, where a create sets it. Both texts are exactly what
 * `JSON.stringify` of the stored form and of `withTypeMeta` of the served form give; any other
 * layout is stringified twice, as before.
 */
import type { ApiObject } from './object.js';

export interface StoredJson {
  /** The stored value's text: `obj` with metadata.resourceVersion left out. */
  stored: string;
  /**
   * The served text with `metadata.resourceVersion` = `rv` appended to the metadata (admission
   * removed any resourceVersion the client sent), apiVersion and kind first.
   */
  served(rv: string): string;
}

const TYPE_THEN_METADATA = ['apiVersion', 'kind', 'metadata'];

/** True when `obj`'s first fields are string apiVersion and kind, then metadata. */
function laidOutAsServed(obj: ApiObject): boolean {
  if (typeof obj.apiVersion !== 'string' || typeof obj.kind !== 'string') return false;
  let i = 0;
  for (const key in obj) {
    if (key !== TYPE_THEN_METADATA[i]) return false;
    if (++i === TYPE_THEN_METADATA.length) return true;
  }
  return false;
}

/** Both texts of `obj` (see the file comment); `typeMeta` is what `withTypeMeta` would add. */
export function storedJson(obj: ApiObject, typeMeta: { apiVersion: string; kind: string }): StoredJson {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  const withRv = (rv: string): ApiObject['metadata'] => ({ ...meta, resourceVersion: rv });
  if (!laidOutAsServed(obj)) {
    return { stored: JSON.stringify({ ...obj, metadata: meta }), served: (rv) => JSON.stringify({ ...typeMeta, ...obj, metadata: withRv(rv) }) };
  }
  const { apiVersion, kind, metadata: _m, ...rest } = obj;
  const metaText = JSON.stringify(meta);
  const restText = JSON.stringify(rest);
  const head = `{"apiVersion":${JSON.stringify(apiVersion)},"kind":${JSON.stringify(kind)},"metadata":`;
  const tail = restText === '{}' ? '}' : `,${restText.slice(1)}`;
  return {
    stored: head + metaText + tail,
    served(rv) {
      const rvText = `"resourceVersion":${JSON.stringify(rv)}}`;
      return head + (metaText === '{}' ? `{${rvText}` : `${metaText.slice(0, -1)},${rvText}`) + tail;
    },
  };
}
