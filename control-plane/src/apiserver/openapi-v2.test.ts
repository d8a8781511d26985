// /openapi/v2: the Swagger 2.0 document derived from the v3 documents, its gnostic protobuf form
// read back with field numbers restated here, and the HTTP negotiation, ETag and gzip of its handler.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import YAML from 'yaml';
import { groupVersions } from './resources.js';
import { openApiDocument } from './openapi.js';
import { OPENAPI_V2_PROTOBUF_CONTENT_TYPE, openApiV2Document, serveOpenApiV2 } from './openapi-v2.js';

type Doc = { swagger: string; paths: Record<string, Record<string, any>>; definitions: Record<string, any> }; // eslint-disable-line @typescript-eslint/no-explicit-any
const doc = (): Doc => openApiV2Document() as unknown as Doc;
const DEPLOY = '/apis/apps/v1/namespaces/{namespace}/deployments/{name}';
const PROTO_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

function walk(v: unknown, visit: (k: string, x: unknown) => void): void {
  if (Array.isArray(v)) v.forEach((x) => walk(x, visit));
  else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      visit(k, x);
      walk(x, visit);
    }
  }
}

test('a Swagger 2.0 document: every ref resolves under #/definitions, no v3-only constructs', () => {
  const d = doc();
  assert.equal(d.swagger, '2.0');
  walk(d, (k, x) => {
    if (k === '$ref') assert.ok(typeof x === 'string' && d.definitions[x.replace('#/definitions/', '')] && x.startsWith('#/definitions/'), `${String(x)} resolves`);
    assert.ok(!['allOf', 'oneOf', 'anyOf', 'nullable', 'requestBody', 'content', 'components'].includes(k), `no ${k}`);
  });
  for (const gv of groupVersions()) {
    const v3 = openApiDocument(gv.group, gv.version) as { paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } };
    for (const p of Object.keys(v3.paths)) assert.ok(d.paths[p], p);
    for (const s of Object.keys(v3.components.schemas)) assert.ok(d.definitions[s], s);
  }
});

test('definitions and operations carry group/version/kind; fields naming a definition are plain refs', () => {
  const d = doc();
  const dep = d.definitions['io.k8s.api.apps.v1.Deployment'];
  assert.deepEqual(dep['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  assert.equal(dep.properties.metadata.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.equal(typeof dep.properties.metadata.description, 'string');
  assert.deepEqual(d.definitions['io.k8s.api.apps.v1.DeploymentList']['x-kubernetes-group-version-kind'], [{ group: 'apps', kind: 'DeploymentList', version: 'v1' }]);
  assert.equal(d.definitions['io.k8s.api.core.v1.Container'].properties.ports['x-kubernetes-patch-merge-key'], 'containerPort');
  assert.deepEqual(d.definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'].type, 'string');
  assert.deepEqual(d.definitions['io.k8s.apimachinery.pkg.util.intstr.IntOrString'].format, 'int-or-string');
  const patch = d.paths[DEPLOY]!.patch;
  assert.equal(patch['x-kubernetes-action'], 'patch');
  assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: 'apps', version: 'v1', kind: 'Deployment' });
  assert.ok(patch.consumes.includes('application/strategic-merge-patch+json'));
  assert.deepEqual(patch.parameters[0], { name: 'body', in: 'body', required: true, schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } });
  const fv = patch.parameters.find((p: { name: string }) => p.name === 'fieldValidation');
  assert.equal(fv.in, 'query');
  assert.equal(fv.type, 'string');
  assert.deepEqual(d.paths[DEPLOY]!.parameters.map((p: { name: string; in: string; type: string }) => [p.name, p.in, p.type]), [['name', 'path', 'string'], ['namespace', 'path', 'string']]);
  assert.equal(d.paths['/apis/apps/v1/deployments']!.get.responses['200'].schema.$ref, '#/definitions/io.k8s.api.apps.v1.DeploymentList');
});

// gnostic openapiv2/OpenAPIv2.proto field numbers, restated independently of the encoder's table.
const READER = `syntax = "proto3";
message Any { string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Doc { string swagger = 1; Info info = 2; Paths paths = 8; Defs definitions = 9; }
message Info { string title = 1; string version = 2; }
message Paths { repeated NamedPathItem path = 2; }
message NamedPathItem { string name = 1; PathItem value = 2; }
message PathItem { Op get = 2; Op patch = 8; repeated ParamItem parameters = 9; }
message Op { string operation_id = 5; repeated string consumes = 7; repeated ParamItem parameters = 8; repeated NamedAny vendor_extension = 13; }
message ParamItem { Param parameter = 1; }
message Param { Body body_parameter = 1; NonBody non_body_parameter = 2; }
message Body { string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
message NonBody { Query query_parameter_sub_schema = 3; PathParam path_parameter_sub_schema = 4; }
message Query { string in = 2; string name = 4; string type = 6; }
message PathParam { bool required = 1; string in = 2; string name = 4; string type = 5; }
message Defs { repeated NamedSchema additional_properties = 1; }
message NamedSchema { string name = 1; Schema value = 2; }
message Props { repeated NamedSchema additional_properties = 1; }
message TypeItem { repeated string value = 1; }
message Schema { string _ref = 1; string format = 2; string description = 4; repeated string required = 19; TypeItem type = 22; Props properties = 25; repeated NamedAny vendor_extension = 31; }
`;

test('the protobuf form decodes as gnostic openapi.v2.Document with the same definitions, paths and extensions', async () => {
  const res = await get({ accept: PROTO_ACCEPT });
  assert.equal(res.headers['content-type'], OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  const root = protobuf.parse(READER, { keepCase: true }).root;
  const m = root.lookupType('Doc').toObject(root.lookupType('Doc').decode(res.body), { defaults: false }) as any; // eslint-disable-line @typescript-eslint/no-explicit-any
  const d = doc();
  assert.equal(m.swagger, '2.0');
  assert.equal(m.info.title, 'Kubernetes');
  assert.deepEqual(m.definitions.additional_properties.map((n: { name: string }) => n.name), Object.keys(d.definitions));
  const dep = m.definitions.additional_properties.find((n: { name: string }) => n.name === 'io.k8s.api.apps.v1.Deployment').value;
  assert.deepEqual(dep.type.value, ['object']);
  const gvk = dep.vendor_extension.find((e: { name: string }) => e.name === 'x-kubernetes-group-version-kind');
  assert.deepEqual(YAML.parse(gvk.value.yaml), [{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
  const meta = dep.properties.additional_properties.find((n: { name: string }) => n.name === 'metadata').value;
  assert.equal(meta._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
  assert.deepEqual(m.paths.path.map((p: { name: string }) => p.name), Object.keys(d.paths));
  const item = m.paths.path.find((p: { name: string }) => p.name === DEPLOY).value;
  assert.deepEqual(item.parameters.map((p: any) => p.parameter.non_body_parameter.path_parameter_sub_schema), [ // eslint-disable-line @typescript-eslint/no-explicit-any
    { required: true, in: 'path', name: 'name', type: 'string' },
    { required: true, in: 'path', name: 'namespace', type: 'string' },
  ]);
  assert.equal(item.patch.operation_id, 'patchNamespacedDeployment');
  assert.deepEqual(item.patch.parameters[0].parameter.body_parameter, { name: 'body', in: 'body', required: true, schema: { _ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' } });
  assert.ok(item.patch.parameters.some((p: any) => p.parameter.non_body_parameter?.query_parameter_sub_schema?.name === 'fieldValidation')); // eslint-disable-line @typescript-eslint/no-explicit-any
  const ext = Object.fromEntries(item.patch.vendor_extension.map((e: { name: string; value: { yaml: string } }) => [e.name, YAML.parse(e.value.yaml)]));
  assert.deepEqual(ext, { 'x-kubernetes-action': 'patch', 'x-kubernetes-group-version-kind': { group: 'apps', version: 'v1', kind: 'Deployment' } });
});

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** GET /openapi/v2 from the handler behind a real HTTP server on loopback. */
async function get(headers: Record<string, string>): Promise<Reply> {
  const server = http.createServer((req, res) => serveOpenApiV2(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    return await new Promise<Reply>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/openapi/v2', headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', reject);
        })
        .on('error', reject);
    });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

test('JSON by default, protobuf when asked, 406 otherwise; one ETag for both, If-None-Match → 304; gzip when accepted', async () => {
  const json = await get({});
  assert.equal(json.status, 200);
  assert.equal(json.headers['content-type'], 'application/json');
  assert.deepEqual(JSON.parse(json.body.toString()), doc());
  const etag = json.headers.etag!;
  assert.match(etag, /^"[0-9A-F]{128}"$/);
  assert.match(String(json.headers.vary), /Accept/);
  assert.equal((await get({ accept: 'application/*' })).headers['content-type'], 'application/json');
  const proto = await get({ accept: `application/json;q=0.5, ${PROTO_ACCEPT}` });
  assert.equal(proto.headers['content-type'], OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  assert.equal(proto.headers.etag, etag);
  assert.equal((await get({ accept: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf' })).headers['content-type'], OPENAPI_V2_PROTOBUF_CONTENT_TYPE);
  assert.equal((await get({ accept: 'text/html' })).status, 406);
  const cached = await get({ accept: PROTO_ACCEPT, 'if-none-match': etag });
  assert.equal(cached.status, 304);
  assert.equal(cached.body.length, 0);
  assert.equal((await get({ 'if-none-match': '"other"' })).status, 200);
  const gz = await get({ 'accept-encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gz.body.length < json.body.length / 4, `${gz.body.length} gzipped vs ${json.body.length}`);
  assert.deepEqual(gunzipSync(gz.body), json.body);
  assert.equal((await get({ 'accept-encoding': 'gzip;q=0' })).headers['content-encoding'], undefined);
});
