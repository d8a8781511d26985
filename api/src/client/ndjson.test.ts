import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hasCode } from '@nodelet/base';
import { parseJsonLines } from './ndjson.js';

async function collect(chunks: Array<Buffer | string>): Promise<unknown[]> {
  async function* gen(): AsyncGenerator<Buffer | string> {
    yield* chunks;
  }
  const out: unknown[] = [];
  for await (const v of parseJsonLines(gen(), 'watch /x')) out.push(v);
  return out;
}

test('lines split anywhere, including inside a multi-byte character, parse whole', async () => {
  const text = `${JSON.stringify({ type: 'ADDED', object: { n: 'héllo ✓' } })}\n${JSON.stringify({ type: 'DELETED', object: {} })}\n`;
  const bytes = Buffer.from(text);
  for (let cut = 1; cut < bytes.length; cut += 3) {
    const got = await collect([bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert.deepEqual(got, [{ type: 'ADDED', object: { n: 'héllo ✓' } }, { type: 'DELETED', object: {} }], `cut at ${cut}`);
  }
  const oneByteChunks = [...bytes].map((b) => Buffer.from([b]));
  assert.equal((await collect(oneByteChunks)).length, 2);
});

test('blank lines are skipped and a final line without newline is parsed', async () => {
  assert.deepEqual(await collect(['\n{"a":1}\n\n', '{"b":2}']), [{ a: 1 }, { b: 2 }]);
});

test('a malformed line is a retryable ERR_UNAVAILABLE', async () => {
  await assert.rejects(collect(['{"a":1}\n{nope}\n']), (e) => hasCode(e, 'ERR_UNAVAILABLE') && /malformed watch event/.test((e as Error).message));
});
