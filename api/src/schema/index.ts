/**
 * The API schemas: one definition per type under upstream's names
 * (`io.k8s.api.apps.v1.Deployment`), written once in the modules of this folder and used by the
 * server's `/openapi/v3` documents and its field validation (docs/openapi.md).
 */
import type { JsonSchema } from './dsl.js';
import { META_SCHEMAS } from './meta.js';
import { CORE_CONTAINER_SCHEMAS } from './core-container.js';
import { CORE_POD_SCHEMAS } from './core-pod.js';
import { CORE_VOLUME_SCHEMAS } from './core-volume.js';
import { CORE_CLUSTER_SCHEMAS } from './core-cluster.js';
import { CORE_SERVICE_STORAGE_SCHEMAS } from './core-service-storage.js';
import { APPS_SCHEMAS } from './apps.js';
import { BATCH_SCHEMAS } from './batch.js';
import { POLICY_NODE_STORAGE_SCHEMAS } from './policy-node-storage.js';
import { RBAC_AUTH_SCHEMAS } from './rbac-auth.js';
import { LEASE_SLICE_SCHEMAS } from './lease-slice.js';
import { QUOTA_SCHEDULING_SCHEMAS } from './quota-scheduling.js';
import { ADMISSIONREGISTRATION_SCHEMAS } from './admissionregistration.js';
import { APIEXTENSIONS_SCHEMAS } from './apiextensions.js';
import { NETWORKING_SCHEMAS } from './networking.js';
import { CORE_REPLICATION_SCHEMAS } from './core-replication.js';
import { EVENTS_SCHEMAS } from './events.js';
import { AUTOSCALING_SCHEMAS } from './autoscaling.js';
import { REF_PREFIX } from './dsl.js';
import { applyFieldErrors, unknownFields, type UnknownFieldsOptions } from './unknown-fields.js';

export type { JsonSchema } from './dsl.js';

/** Every definition, by full name. Frozen: callers copy before changing. */
export const API_SCHEMAS: Readonly<Record<string, JsonSchema>> = Object.freeze({
  ...META_SCHEMAS,
  ...CORE_CONTAINER_SCHEMAS,
  ...CORE_POD_SCHEMAS,
  ...CORE_VOLUME_SCHEMAS,
  ...CORE_CLUSTER_SCHEMAS,
  ...CORE_SERVICE_STORAGE_SCHEMAS,
  ...APPS_SCHEMAS,
  ...BATCH_SCHEMAS,
  ...POLICY_NODE_STORAGE_SCHEMAS,
  ...RBAC_AUTH_SCHEMAS,
  ...LEASE_SLICE_SCHEMAS,
  ...QUOTA_SCHEDULING_SCHEMAS,
  ...ADMISSIONREGISTRATION_SCHEMAS,
  ...APIEXTENSIONS_SCHEMAS,
  ...NETWORKING_SCHEMAS,
  ...CORE_REPLICATION_SCHEMAS,
  ...EVENTS_SCHEMAS,
  ...AUTOSCALING_SCHEMAS,
});

const byGvk = new Map<string, string>();
for (const [name, d] of Object.entries(API_SCHEMAS)) {
  for (const g of d['x-kubernetes-group-version-kind'] ?? []) byGvk.set(`${g.group}/${g.version}/${g.kind}`, name);
}

/** The definition name of a kind (`apps`, `v1`, `Deployment` → `io.k8s.api.apps.v1.Deployment`), if described. */
export function schemaNameOfKind(group: string, version: string, kind: string): string | undefined {
  return byGvk.get(`${group}/${version}/${kind}`);
}

/** The names `$ref`ed from `names`' definitions, transitively, `names` included (sorted). */
export function schemaClosure(names: readonly string[]): string[] {
  const seen = new Set<string>();
  const stack = [...names];
  while (stack.length) {
    const name = stack.pop()!;
    if (seen.has(name) || !API_SCHEMAS[name]) continue;
    seen.add(name);
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(visit);
      else if (v && typeof v === 'object') {
        for (const [k, x] of Object.entries(v)) {
          if (k === '$ref' && typeof x === 'string') stack.push(x.slice(REF_PREFIX.length));
          else visit(x);
        }
      }
    };
    visit(API_SCHEMAS[name]);
  }
  return [...seen].sort();
}

/** Fields of a body of `group/version/kind` its schema does not declare (see unknown-fields.ts); [] for kinds without one. */
export function unknownFieldsOfKind(group: string, version: string, kind: string, body: unknown, o: UnknownFieldsOptions = {}): string[] {
  const name = schemaNameOfKind(group, version, kind);
  return name ? unknownFields(API_SCHEMAS, name, body, o) : [];
}

/** Server-side apply's undeclared-field errors for a body of `group/version/kind`. */
export function applyFieldErrorsOfKind(group: string, version: string, kind: string, body: unknown): string[] {
  const name = schemaNameOfKind(group, version, kind);
  return name ? applyFieldErrors(API_SCHEMAS, name, body) : [];
}

export { REF_PREFIX, fullName } from './dsl.js';
export type { UnknownFieldsOptions } from './unknown-fields.js';
