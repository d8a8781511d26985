// The real kubectl 1.32's server-side apply of a custom object: list types come from the CRD's
// structural schema (a keyed list whose items two managers own apart, a set), a field dropped
// from the file is removed, and a change to another manager's field is a conflict.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import YAML from 'yaml';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();
const GROUP = 'ssa.nodelet.io';

const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gadgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  color: { type: 'string' },
                  tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                  endpoints: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const gadget = (spec: Record<string, unknown>): string => YAML.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Gadget', metadata: { name: 'g', namespace: 'default' }, spec });

describe('kubectl apply --server-side of a custom object', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv();
    k = await env.newKubectl();
  });
  after(() => env?.close());

  const apply = async (manager: string, spec: Record<string, unknown>): Promise<{ code: number | null; stderr: string }> =>
    k(['apply', '--server-side', `--field-manager=${manager}`, '-f', '-'], { stdin: gadget(spec) });
  const spec = async (): Promise<Record<string, unknown>> => JSON.parse((await k(['get', 'gadget', 'g', '-o', 'jsonpath={.spec}'])).stdout);

  it('merges a keyed list by key, removes a dropped field, reports a conflict with another manager', async () => {
    assert.equal((await k(['apply', '--server-side', '-f', '-'], { stdin: JSON.stringify(crd) })).code, 0);
    assert.equal((await k(['wait', '--for', 'condition=established', '--timeout=30s', `crd/gadgets.${GROUP}`])).code, 0);

    let r = await apply('one', { color: 'red', tags: ['blue'], endpoints: [{ name: 'a', port: 1 }] });
    assert.equal(r.code, 0, r.stderr);
    // Another manager adds its own item and tag: no conflict (the lists are not atomic).
    r = await apply('two', { tags: ['green'], endpoints: [{ name: 'b', port: 2 }] });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await spec(), { color: 'red', tags: ['blue', 'green'], endpoints: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }] });

    // `one` drops color from its file: removed; the other manager's items stay.
    r = await apply('one', { tags: ['blue'], endpoints: [{ name: 'a', port: 1 }] });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await spec(), { tags: ['blue', 'green'], endpoints: [{ name: 'a', port: 1 }, { name: 'b', port: 2 }] });

    // `two` changing `one`'s item conflicts at that item's field.
    r = await apply('two', { tags: ['green'], endpoints: [{ name: 'b', port: 2 }, { name: 'a', port: 9 }] });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Apply failed with 1 conflict: conflict with "one": \.spec\.endpoints\[name="a"\]\.port/);

    // `two` dropping its item and tag removes them.
    r = await apply('two', {});
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await spec(), { tags: ['blue'], endpoints: [{ name: 'a', port: 1 }] });
  });
});
