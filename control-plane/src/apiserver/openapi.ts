/**
 * The minimal OpenAPI v3 kubectl needs (reference §7): for every group-version a document with a
 * `patch` operation per kind carrying `x-kubernetes-group-version-kind` and a `fieldValidation`
 * parameter, so kubectl leaves field validation to the server (`fieldValidation=Strict`).
 * There are no schemas: kubectl explain and client-side validation are not available.
 */
import { createHash } from 'node:crypto';
import { groupVersions } from './resources.js';

function gvPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}

export function openApiDocument(group: string, version: string): Record<string, unknown> | undefined {
  const gv = groupVersions().find((g) => g.group === group && g.version === version);
  if (!gv) return undefined;
  const paths: Record<string, unknown> = {};
  for (const d of gv.resources) {
    if (d.ephemeral) continue;
    const base = `/${gvPath(group, version)}${d.namespaced ? '/namespaces/{namespace}' : ''}/${d.plural}/{name}`;
    paths[base] = {
      patch: {
        operationId: `patch${d.namespaced ? 'Namespaced' : ''}${d.kind}`,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': { group, version, kind: d.kind },
        parameters: [
          { name: 'fieldValidation', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'fieldManager', in: 'query', schema: { type: 'string', uniqueItems: true } },
          { name: 'dryRun', in: 'query', schema: { type: 'string', uniqueItems: true } },
        ],
        responses: { '200': { description: 'OK' } },
      },
    };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0-nodelet' }, paths, components: { schemas: {} } };
}

let indexCache: Record<string, unknown> | undefined;
export function openApiIndex(): Record<string, unknown> {
  if (indexCache) return indexCache;
  const paths: Record<string, unknown> = {};
  for (const gv of groupVersions()) {
    const p = gvPath(gv.group, gv.version);
    const hash = createHash('sha256').update(JSON.stringify(openApiDocument(gv.group, gv.version))).digest('hex').slice(0, 32).toUpperCase();
    paths[p] = { serverRelativeURL: `/openapi/v3/${p}?hash=${hash}` };
  }
  indexCache = { paths };
  return indexCache;
}
