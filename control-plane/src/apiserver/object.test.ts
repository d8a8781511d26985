import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cloneJson } from './object.js';

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
