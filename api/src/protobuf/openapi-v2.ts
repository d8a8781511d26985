/**
 * A Swagger 2.0 document (JSON form) as the protobuf message kubectl asks `/openapi/v2` for:
 * gnostic's `openapi.v2.Document` (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`).
 *
 * Only the messages a Kubernetes document uses are declared below, with gnostic's field numbers
 * (google/gnostic-models, openapiv2/OpenAPIv2.proto). Maps are repeated (name, value) pairs in
 * document order; `x-…` keys are vendor extensions and, like `default` and `enum` values, are an
 * `Any` holding the value as YAML text (JSON is YAML, so the JSON text is written), which is how
 * kube-openapi and kubectl read them back.
 */
import protobuf from 'protobufjs';

const GNOSTIC_V2_PROTO = `
syntax = "proto3";
package openapi.v2;
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Info { string title = 1; string version = 2; string description = 3; repeated NamedAny vendor_extension = 7; }
message Document {
  string swagger = 1; Info info = 2; string host = 3; string base_path = 4; repeated string schemes = 5;
  repeated string consumes = 6; repeated string produces = 7; Paths paths = 8; Definitions definitions = 9;
  repeated SecurityRequirement security = 12; SecurityDefinitions security_definitions = 13; repeated NamedAny vendor_extension = 16;
}
message Paths { repeated NamedAny vendor_extension = 1; repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem {
  string _ref = 1; Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5; Operation options = 6;
  Operation head = 7; Operation patch = 8; repeated ParametersItem parameters = 9; repeated NamedAny vendor_extension = 10;
}
message Operation {
  repeated string tags = 1; string summary = 2; string description = 3; string operation_id = 5; repeated string produces = 6;
  repeated string consumes = 7; repeated ParametersItem parameters = 8; Responses responses = 9; repeated string schemes = 10;
  bool deprecated = 11; repeated NamedAny vendor_extension = 13;
}
message ParametersItem { oneof oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }
message JsonReference { string _ref = 1; string description = 2; }
message Parameter { oneof oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } }
message BodyParameter { string description = 1; string name = 2; string in = 3; bool required = 4; Schema schema = 5; repeated NamedAny vendor_extension = 6; }
message NonBodyParameter { oneof oneof { QueryParameterSubSchema query_parameter_sub_schema = 3; PathParameterSubSchema path_parameter_sub_schema = 4; } }
message QueryParameterSubSchema {
  bool required = 1; string in = 2; string description = 3; string name = 4; string type = 6; string format = 7;
  bool unique_items = 20; repeated NamedAny vendor_extension = 23;
}
message PathParameterSubSchema {
  bool required = 1; string in = 2; string description = 3; string name = 4; string type = 5; string format = 6;
  bool unique_items = 19; repeated NamedAny vendor_extension = 22;
}
message Responses { repeated NamedResponseValue response_code = 1; repeated NamedAny vendor_extension = 2; }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message ResponseValue { oneof oneof { Response response = 1; JsonReference json_reference = 2; } }
message Response { string description = 1; SchemaItem schema = 2; repeated NamedAny vendor_extension = 5; }
message SchemaItem { oneof oneof { Schema schema = 1; } }
message Definitions { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Properties { repeated NamedSchema additional_properties = 1; }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message Schema {
  string _ref = 1; string format = 2; string title = 3; string description = 4; Any default = 5; double multiple_of = 6;
  double maximum = 7; bool exclusive_maximum = 8; double minimum = 9; bool exclusive_minimum = 10; int64 max_length = 11;
  int64 min_length = 12; string pattern = 13; int64 max_items = 14; int64 min_items = 15; bool unique_items = 16;
  int64 max_properties = 17; int64 min_properties = 18; repeated string required = 19; repeated Any enum = 20;
  AdditionalPropertiesItem additional_properties = 21; TypeItem type = 22; ItemsItem items = 23; repeated Schema all_of = 24;
  Properties properties = 25; string discriminator = 26; bool read_only = 27; Any example = 30; repeated NamedAny vendor_extension = 31;
}
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitionsItem { oneof oneof { ApiKeySecurity api_key_security = 2; } }
message ApiKeySecurity { string type = 1; string name = 2; string in = 3; string description = 4; repeated NamedAny vendor_extension = 5; }
message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message StringArray { repeated string value = 1; }
`;

/** The gnostic OpenAPI v2 message text above (exported so tests can decode with it independently). */
export const GNOSTIC_OPENAPI_V2_PROTO = GNOSTIC_V2_PROTO;

type Json = Record<string, unknown>;
type Msg = Record<string, unknown>;

let documentType: protobuf.Type | undefined;
function docType(): protobuf.Type {
  documentType ??= protobuf.parse(GNOSTIC_V2_PROTO, { keepCase: true }).root.lookupType('openapi.v2.Document');
  return documentType;
}

const yamlAny = (v: unknown): Msg => ({ yaml: JSON.stringify(v) });
const named = (o: Json | undefined, value: (v: unknown, k: string) => Msg): Msg[] => Object.entries(o ?? {}).map(([name, v]) => ({ name, value: value(v, name) }));
const extensions = (o: Json): Msg[] => Object.entries(o).filter(([k]) => k.startsWith('x-')).map(([name, v]) => ({ name, value: yamlAny(v) }));

/** Schema keys with a field of the same meaning in gnostic's Schema (snake_case there). */
const SCHEMA_SCALARS: Record<string, string> = {
  format: 'format', title: 'title', description: 'description', multipleOf: 'multiple_of', maximum: 'maximum', exclusiveMaximum: 'exclusive_maximum',
  minimum: 'minimum', exclusiveMinimum: 'exclusive_minimum', maxLength: 'max_length', minLength: 'min_length', pattern: 'pattern',
  maxItems: 'max_items', minItems: 'min_items', uniqueItems: 'unique_items', maxProperties: 'max_properties', minProperties: 'min_properties',
  required: 'required', discriminator: 'discriminator', readOnly: 'read_only',
};

function schema(s: Json): Msg {
  const m: Msg = {};
  for (const [k, v] of Object.entries(s)) {
    if (SCHEMA_SCALARS[k]) m[SCHEMA_SCALARS[k]] = v;
    else if (k === '$ref') m._ref = v;
    else if (k === 'default' || k === 'example') m[k] = yamlAny(v);
    else if (k === 'enum') m.enum = (v as unknown[]).map(yamlAny);
    else if (k === 'type') m.type = { value: Array.isArray(v) ? v : [v] };
    else if (k === 'items') m.items = { schema: (Array.isArray(v) ? v : [v]).map((x) => schema(x as Json)) };
    else if (k === 'allOf') m.all_of = (v as Json[]).map(schema);
    else if (k === 'properties') m.properties = { additional_properties: named(v as Json, (x) => schema(x as Json)) };
    else if (k === 'additionalProperties') m.additional_properties = typeof v === 'boolean' ? { boolean: v } : { schema: schema(v as Json) };
    else if (!k.startsWith('x-')) throw new Error(`openapi v2: schema key ${k} has no protobuf form`);
  }
  const ext = extensions(s);
  if (ext.length) m.vendor_extension = ext;
  return m;
}

function parameter(p: Json): Msg {
  if (p.$ref) return { json_reference: { _ref: p.$ref } };
  if (p.in === 'body') return { parameter: { body_parameter: { description: p.description, name: p.name, in: p.in, required: p.required, schema: schema(p.schema as Json) } } };
  const sub = { required: p.required, in: p.in, description: p.description, name: p.name, type: p.type, format: p.format, unique_items: p.uniqueItems, vendor_extension: extensions(p) };
  const kind = p.in === 'path' ? 'path_parameter_sub_schema' : p.in === 'query' ? 'query_parameter_sub_schema' : undefined;
  if (!kind) throw new Error(`openapi v2: parameter in ${String(p.in)} has no protobuf form here`);
  return { parameter: { non_body_parameter: { [kind]: sub } } };
}

function operation(o: Json): Msg {
  const responses = named(o.responses as Json, (r) => {
    const resp = r as Json;
    return { response: { description: resp.description, ...(resp.schema ? { schema: { schema: schema(resp.schema as Json) } } : {}) } };
  });
  return {
    tags: o.tags, summary: o.summary, description: o.description, operation_id: o.operationId, produces: o.produces, consumes: o.consumes,
    parameters: ((o.parameters as Json[] | undefined) ?? []).map(parameter), responses: { response_code: responses }, schemes: o.schemes,
    vendor_extension: extensions(o),
  };
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/** Encodes a Swagger 2.0 document as gnostic's `openapi.v2.Document`; throws on a construct it has no field for. */
export function encodeOpenApiV2Document(doc: Json): Uint8Array {
  const paths = named(doc.paths as Json, (item) => {
    const it = item as Json;
    const m: Msg = { parameters: ((it.parameters as Json[] | undefined) ?? []).map(parameter), vendor_extension: extensions(it) };
    for (const verb of METHODS) if (it[verb]) m[verb] = operation(it[verb] as Json);
    return m;
  });
  const security = named(doc.securityDefinitions as Json | undefined, (d) => {
    const s = d as Json;
    return { api_key_security: { type: s.type, name: s.name, in: s.in, description: s.description } };
  });
  const info = doc.info as Json;
  const message: Msg = {
    swagger: doc.swagger,
    info: { title: info.title, version: info.version, description: info.description },
    consumes: doc.consumes, produces: doc.produces, schemes: doc.schemes,
    paths: { path: paths },
    definitions: { additional_properties: named(doc.definitions as Json, (s) => schema(s as Json)) },
    ...(security.length ? { security_definitions: { additional_properties: security } } : {}),
    security: ((doc.security as Json[] | undefined) ?? []).map((r) => ({ additional_properties: named(r, (v) => ({ value: v })) })),
    vendor_extension: extensions(doc),
  };
  const type = docType();
  const err = type.verify(message);
  if (err) throw new Error(`openapi v2: ${err}`);
  return type.encode(message).finish();
}
