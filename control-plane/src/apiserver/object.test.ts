import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneJson, jsonRoundTrip } from './object.js';

test('cloneJson copies a parsed body as structuredClone does: deep, own keys, __proto__ an own key', () => {
  const body = JSON.parse('{"metadata":{"name":"p","labels":{"a":"b"}},"spec":{"containers":[{"name":"c","args":["x",1,true,null]}]},"__proto__":{"polluted":true}}') as Record<string, unknown>;
  const copy = cloneJson(body);
  assert.deepStrictEqual(copy, structuredClone(body));
  assert.equal(Object.getPrototypeOf(copy), Object.prototype);
  assert.ok(Object.hasOwn(copy, '__proto__'));
  assert.equal((copy as { polluted?: boolean }).polluted, undefined);
  ((copy.spec as { containers: Array<{ args: unknown[] }> }).containers[0]!.args).push('y');
  (copy.metadata as { labels: Record<string, string> }).labels.a = 'changed';
  assert.deepStrictEqual((body.spec as { containers: Array<{ args: unknown[] }> }).containers[0]!.args, ['x', 1, true, null]);
  assert.equal((body.metadata as { labels: Record<string, string> }).labels.a, 'b');
});

test('cloneJson keeps undefined-valued keys and copies non-plain objects (a YAML timestamp) with structuredClone', () => {
  const when = new Date(0);
  const copy = cloneJson({ a: undefined, when });
  assert.ok('a' in copy);
  assert.ok(copy.when instanceof Date && copy.when !== when && copy.when.getTime() === 0);
});

test('cloneJson copies a value reached twice as two independent copies, whose JSON is the same', () => {
  const shared = { name: 'x', items: [1] };
  const obj = { a: shared, b: shared };
  const copy = cloneJson(obj);
  assert.equal(JSON.stringify(copy), JSON.stringify(obj));
  assert.notEqual(copy.a, shared);
  copy.a.items.push(2);
  assert.deepStrictEqual(copy.b.items, [1], 'changing one copy leaves the other');
  assert.deepStrictEqual(shared.items, [1]);
});

test('jsonRoundTrip gives what JSON.parse(JSON.stringify(v)) gives, or undefined when that is not an equal copy', () => {
  const text = '{"b":1,"a":{"10":"x","z":[1,-2.5,"s",true,null,{"__proto__":{"p":1}}]},"__proto__":{"polluted":true},"e":{}}';
  const body = JSON.parse(text) as Record<string, unknown>;
  const copy = jsonRoundTrip(body)!;
  assert.deepStrictEqual(copy, JSON.parse(JSON.stringify(body)));
  assert.equal(JSON.stringify(copy), text);
  assert.ok(Object.hasOwn(copy, '__proto__'));
  assert.equal((copy as { polluted?: boolean }).polluted, undefined);
  assert.notEqual(copy.a, body.a);
  for (const odd of [{ a: undefined }, { a: -0 }, { a: NaN }, { a: Infinity }, { a: new Date(0) }, { a: new Array(2) }, { a: [undefined] }, { a: () => 1 }, { a: Object.create(null) }, { a: { toJSON: () => 1 } }, { a: 1n }, { a: Symbol('s') }]) {
    assert.equal(jsonRoundTrip(odd), undefined, String(Object.keys(odd)));
  }
});

test('jsonRoundTrip refuses an object that inherits an enumerable key (JSON.stringify would leave it out)', () => {
  Object.defineProperty(Object.prototype, 'pollutedForTest', { value: 1, enumerable: true, configurable: true });
  try {
    assert.equal(jsonRoundTrip({ a: 1 }), undefined);
  } finally {
    delete (Object.prototype as Record<string, unknown>).pollutedForTest;
  }
  assert.deepStrictEqual(jsonRoundTrip({ a: 1 }), { a: 1 });
});
