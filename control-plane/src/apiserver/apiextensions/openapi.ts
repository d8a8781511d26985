/**
 * The OpenAPI definitions of custom resources (../openapi.ts puts them in the group-version
 * documents, so `kubectl explain` works): the version's schema under upstream's name for it
 * (`com.example.stable.v1.CronTab`: the group reversed, the version, the kind), with apiVersion,
 * kind and a metadata reference added.
 */
import { REF_PREFIX, type JsonSchema } from '@nodelet/api';
import type { ResourceDef } from '../resource.js';

/** Upstream's definition name of a custom kind. */
export function customSchemaName(def: Pick<ResourceDef, 'group' | 'version' | 'kind'>): string {
  return `${def.group.split('.').reverse().join('.')}.${def.version}.${def.kind}`;
}

/** Definitions of the custom kinds among `defs`, by name. */
export function customSchemas(defs: readonly ResourceDef[]): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const def of defs) {
    if (!def.custom) continue;
    const schema = structuredClone(def.custom.schema ?? { type: 'object' }) as JsonSchema;
    const { metadata: _m, apiVersion: _a, kind: _k, ...props } = schema.properties ?? {};
    out[customSchemaName(def)] = {
      ...schema,
      properties: {
        apiVersion: { type: 'string', description: 'The schema version of this representation of the object.' },
        kind: { type: 'string', description: 'The type of the object.' },
        metadata: { allOf: [{ $ref: `${REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` }], description: 'Standard object metadata.' },
        ...props,
      },
      'x-kubernetes-group-version-kind': [{ group: def.group, kind: def.kind, version: def.version }],
    };
  }
  return out;
}
