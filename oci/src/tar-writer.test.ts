import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { Parser, type ReadEntry } from 'tar';
import { hasCode } from '@nodelet/base';
import { type TarEntry, tarStream } from './tar-writer.js';

async function bytes(entries: TarEntry[]): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const b of tarStream(entries)) parts.push(b);
  return Buffer.concat(parts);
}

async function parse(buf: Buffer): Promise<{ path: string; type: string; size: number; linkpath?: string; body: string }[]> {
  const out: { path: string; type: string; size: number; linkpath?: string; body: string }[] = [];
  const pending: Promise<void>[] = [];
  await new Promise<void>((resolve, reject) => {
    const p = new Parser({
      strict: true,
      onReadEntry: (e: ReadEntry) => {
        pending.push(
          e.concat().then((b) => {
            out.push({ path: e.path, type: e.type, size: e.size, ...(e.linkpath ? { linkpath: e.linkpath } : {}), body: b.toString() });
          }),
        );
      },
    });
    p.on('error', reject);
    p.on('end', resolve);
    p.end(buf);
  });
  await Promise.all(pending);
  return out;
}

const file = (path: string, body: string, mode = 0o644): TarEntry => ({ type: 'file', path, mode, size: Buffer.byteLength(body), open: () => Readable.from([Buffer.from(body)]) });

test('long and non-ASCII names get a pax header; the output is byte-for-byte stable', async () => {
  const long = `${'d'.repeat(120)}/${'f'.repeat(120)}`;
  const entries = (): TarEntry[] => [
    { type: 'dir', path: 'd', mode: 0o755 },
    file(long, 'long\n'),
    file('grüße.txt', 'hi\n'),
    { type: 'symlink', path: 'l', target: `/${'t'.repeat(150)}` },
  ];
  const a = await bytes(entries());
  const b = await bytes(entries());
  assert.equal(createHash('sha256').update(a).digest('hex'), createHash('sha256').update(b).digest('hex'));
  assert.equal(a.length % 512, 0);
  assert.deepEqual(a.subarray(a.length - 1024), Buffer.alloc(1024), 'ends with two zero blocks');
  assert.deepEqual(await parse(a), [
    { path: 'd/', type: 'Directory', size: 0, body: '' },
    { path: long, type: 'File', size: 5, body: 'long\n' },
    { path: 'grüße.txt', type: 'File', size: 3, body: 'hi\n' },
    { path: 'l', type: 'SymbolicLink', size: 0, linkpath: `/${'t'.repeat(150)}`, body: '' },
  ]);
});

test('a body that is shorter or longer than its declared size fails instead of writing a broken tar', async () => {
  for (const body of ['abc', 'abcdefgh']) {
    const e: TarEntry = { type: 'file', path: 'x', mode: 0o644, size: 5, what: 'the test file', open: () => Readable.from([Buffer.from(body)]) };
    await assert.rejects(bytes([e]), (err: Error) => hasCode(err, 'ERR_FAILED_PRECONDITION') && /the test file changed while it was written/.test(err.message));
  }
});

test('paths that are absolute or climb out are refused', async () => {
  for (const path of ['/etc/passwd', '../x', 'a/../../x', '']) {
    await assert.rejects(bytes([{ type: 'dir', path, mode: 0o755 }]), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT'));
  }
});
