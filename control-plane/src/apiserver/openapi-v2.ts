/**
 * `/openapi/v2`: one Swagger 2.0 document of every served group-version, derived from the
 * `/openapi/v3` documents (./openapi.ts) so both come from the same schemas. kubectl reads it to
 * validate on the client what the server cannot validate itself: the items of a `kind: List`
 * (`kubectl apply -f` of what `kubectl get -o yaml` writes for several objects), which kubectl's
 * `--validate=strict` checks against the v2 models before applying each item.
 *
 * Served as kube-apiserver serves it: JSON by default, gnostic's protobuf `openapi.v2.Document`
 * when Accept names it (kubectl does), 406 for anything else; one ETag (the SHA-512 of the JSON)
 * for both forms with `Vary: Accept`, `If-None-Match` → 304, gzip when the client accepts it.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';
import { encodeOpenApiV2Document, REF_PREFIX } from '@nodelet/api';
import { acceptsGzip, parseMediaTypes } from './media.js';
import { openApiDocument } from './openapi.js';
import { groupVersions, RESOURCE_DEFS } from './resources.js';
import type { ResourceDef } from './resource.js';

type Json = Record<string, unknown>;

const V2_REF_PREFIX = '#/definitions/';
/** What kube-openapi answers with for its protobuf form (either protobuf media type is accepted). */
export const OPENAPI_V2_PROTOBUF_CONTENT_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const PROTOBUF_SUBTYPES = new Set(['com.github.proto-openapi.spec.v2@v1.0+protobuf', 'com.github.proto-openapi.spec.v2.v1.0+protobuf']);

/**
 * A v3 schema in v2's dialect: refs point at `#/definitions/`, a field naming another definition
 * (`allOf: [{$ref}]` in v3) is a plain `$ref` with its description, as upstream's v2 has it, and
 * the scalars v3 writes as `oneOf` alternatives (IntOrString, Quantity) are strings, as in
 * upstream's v2 (kubectl's validator lets any value through a string).
 */
export function toV2Schema(s: Json): Json {
  const out: Json = {};
  const allOf = s.allOf as Json[] | undefined;
  if (allOf?.length === 1 && typeof allOf[0]!.$ref === 'string') {
    out.$ref = v2Ref(allOf[0]!.$ref as string);
    if (s.description !== undefined) out.description = s.description;
    return out;
  }
  for (const [k, v] of Object.entries(s)) {
    if (k === '$ref') out.$ref = v2Ref(v as string);
    else if (k === 'properties') out.properties = Object.fromEntries(Object.entries(v as Record<string, Json>).map(([n, p]) => [n, toV2Schema(p)]));
    else if (k === 'items' || (k === 'additionalProperties' && typeof v === 'object')) out[k] = toV2Schema(v as Json);
    else if (k === 'allOf') out.allOf = (v as Json[]).map(toV2Schema);
    else if (k === 'oneOf') {
      if (s.type === undefined && (v as Json[]).some((a) => a.type === 'string')) out.type = 'string';
    } else if (k !== 'nullable') out[k] = v;
  }
  return out;
}

function v2Ref(ref: string): string {
  if (!ref.startsWith(REF_PREFIX)) throw new Error(`openapi v2: unexpected ref ${ref}`);
  return V2_REF_PREFIX + ref.slice(REF_PREFIX.length);
}

/** A v3 parameter (`schema: {type}`) in v2's form (the type on the parameter itself). */
function toV2Parameter(p: Json): Json {
  const { schema, ...rest } = p as Json & { schema?: Json };
  return { ...rest, ...(schema ?? {}) };
}

function toV2Operation(op: Json): Json {
  const { requestBody, responses, parameters, ...rest } = op as Json & { requestBody?: { content: Record<string, { schema: Json }>; required?: boolean }; responses: Record<string, Json & { content?: Record<string, { schema: Json }> }>; parameters?: Json[] };
  const params = (parameters ?? []).map(toV2Parameter);
  const out: Json = { ...rest };
  if (requestBody) {
    const types = Object.keys(requestBody.content);
    out.consumes = types;
    params.unshift({ name: 'body', in: 'body', required: requestBody.required ?? false, schema: toV2Schema(requestBody.content[types[0]!]!.schema) });
  }
  const produces = new Set<string>();
  out.responses = Object.fromEntries(
    Object.entries(responses).map(([code, r]) => {
      const types = Object.keys(r.content ?? {});
      types.forEach((t) => produces.add(t));
      return [code, { description: r.description, ...(types.length ? { schema: toV2Schema(r.content![types[0]!]!.schema) } : {}) }];
    }),
  );
  if (produces.size) out.produces = [...produces];
  if (params.length) out.parameters = params;
  return out;
}

/** The Swagger 2.0 document: every served group-version's paths and definitions (of `defs`, default the built-in table). */
export function openApiV2Document(defs: readonly ResourceDef[] = RESOURCE_DEFS): Json {
  const paths: Json = {};
  const definitions: Record<string, Json> = {};
  let info: Json | undefined;
  for (const gv of groupVersions(defs)) {
    const v3 = openApiDocument(gv.group, gv.version, defs) as { info: Json; paths: Record<string, Json>; components: { schemas: Record<string, Json> } } | undefined;
    if (!v3) continue;
    info ??= v3.info;
    for (const [path, item] of Object.entries(v3.paths)) {
      paths[path] = Object.fromEntries(
        Object.entries(item).map(([k, v]) => [k, k === 'parameters' ? (v as Json[]).map(toV2Parameter) : toV2Operation(v as Json)]),
      );
    }
    for (const [name, s] of Object.entries(v3.components.schemas)) definitions[name] ??= toV2Schema(s);
  }
  return {
    swagger: '2.0',
    info: info ?? { title: 'Kubernetes', version: 'unversioned' },
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : 1))),
    definitions: Object.fromEntries(Object.entries(definitions).sort(([a], [b]) => (a < b ? -1 : 1))),
    securityDefinitions: { BearerToken: { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer Token authentication' } },
    security: [{ BearerToken: [] }],
  };
}

interface Encoded {
  body: Buffer;
  gzipped: Buffer;
}
interface ServedForms {
  json: Encoded;
  proto: Encoded;
  etag: string;
  lastModified: string;
}
/**
 * Both forms, encoded (and gzipped) once per set of served kinds: the built-in document never
 * changes; CRDs coming and going make a new one (the last few are kept).
 */
const formsCache = new Map<string, ServedForms>();
function servedForms(defs: readonly ResourceDef[]): ServedForms {
  const key = JSON.stringify(defs.filter((d) => d.custom).map((d) => [d.group, d.version, d.kind, d.plural, d.namespaced, d.subresources, d.custom]));
  const hit = formsCache.get(key);
  if (hit) return hit;
  const doc = openApiV2Document(defs);
  const json = Buffer.from(JSON.stringify(doc));
  const proto = Buffer.from(encodeOpenApiV2Document(doc));
  const forms: ServedForms = {
    json: { body: json, gzipped: gzipSync(json) },
    proto: { body: proto, gzipped: gzipSync(proto) },
    etag: `"${createHash('sha512').update(json).digest('hex').toUpperCase()}"`,
    lastModified: new Date().toUTCString(),
  };
  if (formsCache.size >= 4) formsCache.delete(formsCache.keys().next().value!);
  formsCache.set(key, forms);
  return forms;
}

/** Which form the Accept header asks for first (by q, then order), or undefined when neither. */
function negotiate(accept: string | undefined): 'json' | 'proto' | undefined {
  const clauses = parseMediaTypes(accept || '*/*')
    .map((m, i) => ({ type: m.type, q: m.params.q === undefined ? 1 : Number(m.params.q), i }))
    .filter((c) => c.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const c of clauses) {
    const [type, sub] = c.type.split('/');
    if (type !== 'application' && type !== '*') continue;
    if (sub === '*' || sub === 'json') return 'json';
    if (PROTOBUF_SUBTYPES.has(sub ?? '')) return 'proto';
  }
  return undefined;
}

/** Answers `GET /openapi/v2`. */
export function serveOpenApiV2(req: IncomingMessage, res: ServerResponse, defs: readonly ResourceDef[] = RESOURCE_DEFS): void {
  const form = negotiate(req.headers.accept);
  res.setHeader('Vary', 'Accept, Accept-Encoding');
  if (!form) {
    res.writeHead(406, { 'Content-Length': 0 });
    res.end();
    return;
  }
  const s = servedForms(defs);
  const headers: Record<string, string | number> = {
    'Content-Type': form === 'json' ? 'application/json' : OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
    ETag: s.etag,
    'Last-Modified': s.lastModified,
  };
  const inm = req.headers['if-none-match'];
  if (inm && (inm.trim() === '*' || inm.split(',').some((t) => t.trim().replace(/^W\//, '') === s.etag))) {
    delete headers['Content-Type'];
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const encoded = form === 'json' ? s.json : s.proto;
  const gzip = acceptsGzip(req.headers['accept-encoding']);
  const body = gzip ? encoded.gzipped : encoded.body;
  if (gzip) headers['Content-Encoding'] = 'gzip';
  headers['Content-Length'] = body.byteLength;
  res.writeHead(200, headers);
  res.end(req.method === 'HEAD' ? undefined : body);
}
