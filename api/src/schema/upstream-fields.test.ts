// The schemas against the field lists of @kubernetes/client-node 1.4.0's generated models (built
// from the Kubernetes v1.34 OpenAPI): every field we declare exists upstream with the same type,
// and every upstream field is declared unless it came after v1.32 (the version we serve). A field
// missing here is a field `kubectl apply --validate=strict` (kubectl's default) would refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { API_SCHEMAS, REF_PREFIX, type JsonSchema } from './index.js';

/** Fields the v1.34 models have that v1.32 does not (KEP alpha/beta fields added in 1.33 and 1.34). */
const AFTER_V1_32: Readonly<Record<string, readonly string[]>> = {
  'io.k8s.api.core.v1.Container': ['restartPolicyRules'],
  'io.k8s.api.core.v1.EphemeralContainer': ['restartPolicyRules'],
  'io.k8s.api.core.v1.EnvVarSource': ['fileKeyRef'],
  'io.k8s.api.core.v1.Lifecycle': ['stopSignal'],
  'io.k8s.api.core.v1.ContainerStatus': ['stopSignal'],
  'io.k8s.api.core.v1.PodSpec': ['hostnameOverride'],
  'io.k8s.api.core.v1.PodStatus': ['extendedResourceClaimStatus', 'observedGeneration'],
  'io.k8s.api.core.v1.PodCondition': ['observedGeneration'],
  'io.k8s.api.core.v1.VolumeProjection': ['podCertificate'],
  'io.k8s.api.apps.v1.DeploymentStatus': ['terminatingReplicas'],
  'io.k8s.api.apps.v1.ReplicaSetStatus': ['terminatingReplicas'],
  'io.k8s.api.discovery.v1.EndpointHints': ['forNodes'],
  'io.k8s.api.autoscaling.v2.HPAScalingRules': ['tolerance'],
};

interface Attribute {
  baseName: string;
  type: string;
  format: string;
}
type Model = { getAttributeTypeMap(): Attribute[] };
const models = k8s as unknown as Record<string, Model | undefined>;

const cap = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

/** The generated model of an upstream definition: `V1PodSpec`, or `CoreV1EndpointPort` where names collide across groups. */
function modelOf(name: string): Model | undefined {
  const m = /^io\.k8s\.(?:api\.([a-z0-9]+)|apimachinery\.pkg\.apis\.(meta)|apiextensions-apiserver\.pkg\.apis\.(apiextensions))\.(v\d+)\.(\w+)$/.exec(name);
  if (!m) return undefined;
  const [group, version, kind] = [m[1] ?? m[2] ?? m[3]!, cap(m[4]!), m[5]!];
  return models[`${cap(group)}${version}${kind}`] ?? models[`${version}${kind}`];
}

/** A field's type in the models' vocabulary: `number:int32`, `Array<ref:Container>`, `map<string:byte>`, `Date`. */
function ourType(s: JsonSchema, format = s.format): string {
  const target = s.$ref ?? s.allOf?.[0]?.$ref;
  if (target) {
    const short = target.slice(REF_PREFIX.length).split('.').pop()!;
    if (short === 'Time' || short === 'MicroTime') return 'Date';
    if (short === 'Quantity') return 'string';
    if (short === 'IntOrString') return 'IntOrString';
    // Empty structs upstream: the model generator types them `any`.
    if (short === 'RawExtension' || short === 'FieldsV1' || short === 'CustomResourceSubresourceStatus') return 'any';
    return `ref:${short}`;
  }
  if (s.type === 'integer' || s.type === 'number') return `number:${format ?? ''}`;
  if (s.type === 'array') return `Array<${ourType(s.items!, s.items!.format)}>`;
  if (s.type === 'object' && s.additionalProperties) return `map<${ourType(s.additionalProperties, s.additionalProperties.format)}>`;
  return s.type === 'string' && format === 'byte' ? 'string:byte' : String(s.type);
}

function upstreamType(type: string, format: string): string {
  if (type === 'number') return `number:${format}`;
  if (type === 'V1MicroTime' || type === 'Date') return 'Date';
  const arr = /^Array<(.*)>$/.exec(type);
  if (arr) return `Array<${upstreamType(arr[1]!, format)}>`;
  const map = /^\{ \[key: string\]: (.*); \}$/.exec(type);
  if (map) return `map<${upstreamType(map[1]!, format)}>`;
  if (type === 'string' && format === 'byte') return 'string:byte';
  if (/^[A-Z]/.test(type) && type !== 'IntOrString') return `ref:${type.replace(/^(?:[A-Z][a-z]+)?V\d+(?=[A-Z])/, '')}`;
  return type;
}

const structs = Object.entries(API_SCHEMAS).filter(([name, def]) => def.properties && name.startsWith('io.k8s.'));

test('every upstream struct we describe has a generated model to compare with', () => {
  assert.ok(structs.length > 150, `${structs.length} structs`);
  assert.deepEqual(structs.filter(([name]) => !modelOf(name)).map(([name]) => name), []);
});

test('every field we declare exists upstream, with upstream’s type', () => {
  const wrong: string[] = [];
  for (const [name, def] of structs) {
    const up = new Map(modelOf(name)!.getAttributeTypeMap().map((a) => [a.baseName, a]));
    for (const [field, s] of Object.entries(def.properties!)) {
      const a = up.get(field);
      if (!a) wrong.push(`${name}.${field}: not an upstream field`);
      else if (ourType(s) !== upstreamType(a.type, a.format)) wrong.push(`${name}.${field}: ${ourType(s)}, upstream ${upstreamType(a.type, a.format)}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('every v1.32 field of the structs we describe is declared (strict validation accepts what kubectl sends)', () => {
  const missing: string[] = [];
  for (const [name, def] of structs) {
    const later = AFTER_V1_32[name] ?? [];
    for (const a of modelOf(name)!.getAttributeTypeMap()) {
      if (!def.properties![a.baseName] && !later.includes(a.baseName)) missing.push(`${name}.${a.baseName}`);
    }
  }
  assert.deepEqual(missing, []);
});

test('the comparison can fail: a renamed field and a wrong type are both reported', () => {
  const pdbSpec = API_SCHEMAS['io.k8s.api.policy.v1.PodDisruptionBudgetSpec']!;
  const up = new Map(modelOf('io.k8s.api.policy.v1.PodDisruptionBudgetSpec')!.getAttributeTypeMap().map((a) => [a.baseName, a]));
  assert.ok(up.has('unhealthyPodEvictionPolicy') && !up.has('unhealthyPodEvictionPolice'));
  const a = up.get('minAvailable')!;
  assert.equal(ourType(pdbSpec.properties!.minAvailable!), upstreamType(a.type, a.format));
  assert.notEqual(ourType({ type: 'integer', format: 'int32' }), upstreamType(a.type, a.format));
});
