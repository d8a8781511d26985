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

test('owners: uid/gid and setuid, setgid and sticky bits reach the headers (pax ones too); root by default; bad ids are refused', async () => {
  const long = `${'d'.repeat(120)}/${'f'.repeat(120)}`;
  const buf = await bytes([
    { type: 'dir', path: 'run/postgresql', mode: 0o2775, uid: 102, gid: 102 },
    { ...file('usr/bin/passwd', 'x', 0o4755) },
    { ...file('usr/bin/chage', 'x', 0o2755), gid: 42 } as TarEntry,
    { ...file(long, 'x', 0o600), uid: 102, gid: 102 } as TarEntry,
    { type: 'dir', path: 'var/log/postgresql', mode: 0o1775, gid: 102 },
  ]);
  const seen: { path: string; uid?: number; gid?: number; mode?: number; uname?: string }[] = [];
  await new Promise<void>((resolve, reject) => {
    const p = new Parser({ strict: true, onReadEntry: (e: ReadEntry) => { seen.push({ path: e.path, uid: e.uid, gid: e.gid, mode: e.mode, uname: e.uname }); e.resume(); } });
    p.on('error', reject);
    p.on('end', resolve);
    p.end(buf);
  });
  assert.deepEqual(seen, [
    { path: 'run/postgresql/', uid: 102, gid: 102, mode: 0o2775, uname: '' },
    { path: 'usr/bin/passwd', uid: 0, gid: 0, mode: 0o4755, uname: '' },
    { path: 'usr/bin/chage', uid: 0, gid: 42, mode: 0o2755, uname: '' },
    { path: long, uid: 102, gid: 102, mode: 0o600, uname: '' },
    { path: 'var/log/postgresql/', uid: 0, gid: 102, mode: 0o1775, uname: '' },
  ]);
  for (const uid of [-1, 1.5, 0o10000000]) {
    await assert.rejects(bytes([{ type: 'dir', path: 'd', mode: 0o755, uid }]), (err: Error) => hasCode(err, 'ERR_INVALID_ARGUMENT') && /uid and gid must be integers/.test(err.message));
  }
});
