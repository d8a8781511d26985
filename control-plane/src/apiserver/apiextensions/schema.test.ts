// Structural schema validation, pruning and defaulting, case by case, with upstream's field
// paths and messages.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyDefaults, prune, validateValue, type StructuralSchema } from './schema.js';

const S: StructuralSchema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 2, maxLength: 5, pattern: '^[a-z]+$' },
    count: { type: 'integer', minimum: 1, maximum: 3 },
    ratio: { type: 'number', minimum: 0, exclusiveMinimum: true },
    mode: { type: 'string', enum: ['a', 'b'] },
    port: { 'x-kubernetes-int-or-string': true },
    tags: { type: 'array', maxItems: 2, items: { type: 'string' } },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    maybe: { type: 'string', nullable: true },
    inner: { type: 'object', required: ['x'], properties: { x: { type: 'boolean' } } },
    embedded: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    step: { type: 'integer', multipleOf: 5, format: 'int32' },
    when: { type: 'string', format: 'date-time' },
    id: { type: 'string', format: 'uuid' },
    net: { type: 'string', format: 'cidr' },
    other: { type: 'string', format: 'not-a-known-format' },
    small: { type: 'object', maxProperties: 1, additionalProperties: { type: 'string' } },
    set: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
    ports: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['port'], items: { type: 'object', properties: { port: { type: 'integer' }, name: { type: 'string' } } } },
  },
};

describe('structural schema validation', () => {
  const cases: Array<[string, unknown, Array<[string, string]>]> = [
    ['a valid object', { name: 'ab', count: 2, ratio: 0.5, mode: 'a', port: 'http', tags: ['x'], labels: { k: 'v' }, free: { any: [1] }, maybe: null, inner: { x: true } }, []],
    ['a required field missing', {}, [['name', 'Required value']]],
    ['the wrong type', { name: 'ab', count: 'two' }, [['count', 'Invalid value: "string": count in body must be of type integer: "string"']]],
    ['a number where an integer is declared', { name: 'ab', count: 1.5 }, [['count', 'Invalid value: "number": count in body must be of type integer: "number"']]],
    ['below minimum', { name: 'ab', count: 0 }, [['count', 'Invalid value: 0: count in body should be greater than or equal to 1']]],
    ['above maximum', { name: 'ab', count: 4 }, [['count', 'Invalid value: 4: count in body should be less than or equal to 3']]],
    ['an exclusive minimum', { name: 'ab', ratio: 0 }, [['ratio', 'Invalid value: 0: ratio in body should be greater than 0']]],
    ['too short', { name: 'a' }, [['name', 'Invalid value: "a": name in body should be at least 2 chars long']]],
    ['too long', { name: 'abcdef' }, [['name', 'Too long: must have at most 5 bytes']]],
    ['a pattern mismatch', { name: 'AB' }, [['name', 'Invalid value: "AB": name in body should match \'^[a-z]+$\'']]],
    ['a value outside the enum', { name: 'ab', mode: 'c' }, [['mode', 'Unsupported value: "c": supported values: "a", "b"']]],
    ['int-or-string given a boolean', { name: 'ab', port: true }, [['port', 'Invalid value: "boolean": port in body must be of type integer,string: "boolean"']]],
    ['too many items', { name: 'ab', tags: ['a', 'b', 'c'] }, [['tags', 'Too many: 3: must have at most 2 items']]],
    ['an item of the wrong type', { name: 'ab', tags: ['a', 1] }, [['tags[1]', 'Invalid value: "integer": tags[1] in body must be of type string: "integer"']]],
    ['a map value of the wrong type', { name: 'ab', labels: { k: 1 } }, [['labels.k', 'Invalid value: "integer": labels.k in body must be of type string: "integer"']]],
    ['null where not nullable', { name: 'ab', count: null }, [['count', 'Invalid value: "null": count in body must be of type integer: "null"']]],
    ['a nested required field', { name: 'ab', inner: {} }, [['inner.x', 'Required value']]],
    ['an embedded resource without apiVersion and kind', { name: 'ab', embedded: { metadata: {} } }, [['embedded.apiVersion', 'Required value: must not be empty'], ['embedded.kind', 'Required value: must not be empty']]],
    ['known formats that parse, and an unknown format', { name: 'ab', when: '2026-01-02T03:04:05Z', id: '0b6e1a52-3e0c-4f4f-9c1e-7a1d7cbb2a10', net: '10.0.0.0/8', other: 'anything', step: 5 }, []],
    ['a bad date-time', { name: 'ab', when: 'yesterday' }, [['when', 'Invalid value: "yesterday": when in body must be of type date-time: "yesterday"']]],
    ['a bad uuid and cidr', { name: 'ab', id: 'x', net: '10.0.0.0/33' }, [['id', 'Invalid value: "x": id in body must be of type uuid: "x"'], ['net', 'Invalid value: "10.0.0.0/33": net in body must be of type cidr: "10.0.0.0/33"']]],
    ['not a multiple', { name: 'ab', step: 7 }, [['step', 'Invalid value: 7: step in body should be a multiple of 5']]],
    ['too many properties', { name: 'ab', small: { a: 'x', b: 'y' } }, [['small', 'Too many: 2: must have at most 1 items']]],
    ['a duplicate in a set', { name: 'ab', set: ['a', 'b', 'a'] }, [['set[2]', 'Duplicate value: "a"']]],
    ['a duplicate map key', { name: 'ab', ports: [{ port: 80, name: 'a' }, { port: 80, name: 'b' }] }, [['ports[1]', 'Duplicate value: {"port":80}']]],
  ];
  for (const [what, value, want] of cases) {
    it(what, () => {
      assert.deepEqual(validateValue(S, value, '').map((e) => [e.field, e.message]), want);
    });
  }
  it('prefixes paths under spec as the server validates them', () => {
    const errs = validateValue({ type: 'object', properties: { spec: S } }, { spec: { name: 'ab', count: 9 } }, '');
    assert.deepEqual(errs.map((e) => e.field), ['spec.count']);
  });
});

describe('pruning', () => {
  it('drops undeclared fields at every depth, keeps preserved and additionalProperties ones, and the root and embedded metadata', () => {
    const obj = {
      apiVersion: 'x/v1', kind: 'X', metadata: { name: 'n' }, name: 'ab', junk: 1,
      inner: { x: true, junk: 2 }, labels: { a: 'b' }, free: { anything: { deep: 1 } },
      embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { any: 1 } },
      tags: ['a'],
    };
    prune(S, obj, true);
    assert.deepEqual(obj, {
      apiVersion: 'x/v1', kind: 'X', metadata: { name: 'n' }, name: 'ab',
      inner: { x: true }, labels: { a: 'b' }, free: { anything: { deep: 1 } },
      embedded: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { any: 1 } },
      tags: ['a'],
    });
  });
  it('prunes inside array items', () => {
    const v = [{ a: 1, b: 2 }];
    prune({ type: 'array', items: { type: 'object', properties: { a: { type: 'integer' } } } }, v);
    assert.deepEqual(v, [{ a: 1 }]);
  });
});

describe('defaulting', () => {
  const D: StructuralSchema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        default: {},
        properties: {
          replicas: { type: 'integer', default: 1 },
          mode: { type: 'string', default: 'safe' },
          ports: { type: 'array', items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' } } } },
        },
      },
    },
  };
  it('fills absent fields, creating defaulted objects and defaulting inside them', () => {
    assert.deepEqual(applyDefaults(D, {}), { spec: { replicas: 1, mode: 'safe' } });
  });
  it('keeps values given, defaults array items', () => {
    assert.deepEqual(applyDefaults(D, { spec: { replicas: 3, ports: [{}, { protocol: 'UDP' }] } }), { spec: { replicas: 3, mode: 'safe', ports: [{ protocol: 'TCP' }, { protocol: 'UDP' }] } });
  });
  it('does not share the default value between objects', () => {
    const a = applyDefaults(D, {}) as { spec: { replicas: number } };
    a.spec.replicas = 9;
    assert.deepEqual(applyDefaults(D, {}), { spec: { replicas: 1, mode: 'safe' } });
  });
});
