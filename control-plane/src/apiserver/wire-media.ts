/**
 * Which encoding a get, list or watch reply uses: JSON, or Kubernetes protobuf when the client
 * prefers it (`Accept: application/vnd.kubernetes.protobuf, application/json`, as kubelet and
 * client-go send) and the kind has a table in @nodelet/api's protobuf schema. Kinds without a
 * table, and objects holding a field the table lacks, are answered in JSON when the client
 * accepts it (as kube-apiserver answers JSON for custom resources), else 406. See docs/apiserver.md.
 */
import { encodeProtobufObject, protobufEncodable } from '@nodelet/api';
import { parseMediaTypes } from './media.js';
import { StatusError } from './status.js';

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
export const PROTOBUF_WATCH_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';

/** The reply encoding chosen for one request. */
export interface WireMedia {
  media: 'json' | 'protobuf';
  /** Whether JSON is an acceptable fallback (explicitly, or through a wildcard). */
  jsonAcceptable: boolean;
}

const JSON_ONLY: WireMedia = { media: 'json', jsonAcceptable: true };

/**
 * Reads Accept in preference order (q-values, then position). Protobuf wins only when it is
 * preferred over JSON and `apiVersion`/`kind` has a table; a missing or JSON-first Accept stays JSON.
 */
export function negotiateWireMedia(accept: string | undefined, apiVersion: string, kind: string): WireMedia {
  const ranked = parseMediaTypes(accept)
    .map((m, i) => ({ m, i, q: m.params.q === undefined ? 1 : Number(m.params.q) }))
    .filter((x) => Number.isFinite(x.q) && x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  const isJson = (t: string, params: Record<string, string>): boolean =>
    (t === 'application/json' && params.as === undefined) || t === '*/*' || t === 'application/*';
  const jsonAcceptable = !accept || ranked.some((x) => isJson(x.m.type, x.m.params));
  // `as=Table` (or PartialObjectMetadata) in protobuf is not served: such an entry does not count.
  const isProtobuf = (t: string, params: Record<string, string>): boolean => t === PROTOBUF_CONTENT_TYPE && params.as === undefined;
  const first = ranked.find((x) => isProtobuf(x.m.type, x.m.params) || isJson(x.m.type, x.m.params));
  if (!first || !isProtobuf(first.m.type, first.m.params)) return JSON_ONLY;
  if (!protobufEncodable(apiVersion, kind)) {
    if (jsonAcceptable) return JSON_ONLY;
    throw notAcceptable(kind);
  }
  return { media: 'protobuf', jsonAcceptable };
}

/** 406 for a client that accepts only protobuf of something that has no protobuf form here. */
export function notAcceptable(kind: string): StatusError {
  return new StatusError(406, 'NotAcceptable', `only the following media types are accepted for ${kind}: application/json, application/yaml`);
}

/** The enveloped protobuf bytes of `obj` (typed), or undefined when the table cannot carry it. */
export function protobufBytes(obj: object): Buffer | undefined {
  const bytes = encodeProtobufObject(obj as Record<string, unknown>);
  return bytes && Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
