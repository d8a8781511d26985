import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { followCriLog, formatCriLogEntry, parseCriLogLine, readCriLog, type CriLogEntry } from './logs.js';

const T1 = '2026-12-02T10:00:00.000000001Z';
const T2 = '2026-12-02T10:00:01.500000000Z';
const T3 = '2026-12-02T10:00:02.000000000Z';

async function tempLog(t: import('node:test').TestContext, content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-crilog-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const p = join(dir, '0.log');
  await writeFile(p, content);
  return p;
}

async function all(it: AsyncIterable<CriLogEntry>): Promise<string[]> {
  const out: string[] = [];
  for await (const e of it) out.push(`${e.stream}:${e.content}`);
  return out;
}

test('parseCriLogLine: fields, partial tag, empty content, junk', () => {
  assert.deepEqual(parseCriLogLine(`${T1} stdout F hello world`), { timestamp: T1, stream: 'stdout', partial: false, content: 'hello world' });
  assert.deepEqual(parseCriLogLine(`${T1} stderr P part`), { timestamp: T1, stream: 'stderr', partial: true, content: 'part' });
  assert.equal(parseCriLogLine(`${T1} stdout F `)?.content, '');
  assert.equal(parseCriLogLine(`${T1} stdout F`)?.content, '');
  assert.equal(parseCriLogLine('not a log line'), undefined);
  assert.equal(parseCriLogLine(`${T1} stdin F x`), undefined);
  assert.equal(parseCriLogLine(`${T1} stdout X x`), undefined);
});

test('readCriLog joins partial records per stream and keeps the first timestamp', async (t) => {
  const p = await tempLog(t, [`${T1} stdout P hel`, `${T2} stderr F err`, `${T2} stdout F lo`, `${T3} stdout F  spaced`, ''].join('\n'));
  const entries: CriLogEntry[] = [];
  for await (const e of readCriLog(p)) entries.push(e);
  assert.deepEqual(entries.map((e) => [e.timestamp, e.stream, e.content]), [
    [T2, 'stderr', 'err'],
    [T1, 'stdout', 'hello'],
    [T3, 'stdout', ' spaced'],
  ]);
  assert.equal(formatCriLogEntry(entries[1]!, { timestamps: true }), `${T1} hello\n`);
  assert.equal(formatCriLogEntry(entries[1]!), 'hello\n');
});

test('readCriLog: tail, since and stream filters', async (t) => {
  const p = await tempLog(t, [`${T1} stdout F a`, `${T2} stderr F b`, `${T3} stdout F c`, ''].join('\n'));
  assert.deepEqual(await all(readCriLog(p, { tail: 2 })), ['stderr:b', 'stdout:c']);
  assert.deepEqual(await all(readCriLog(p, { tail: 0 })), []);
  assert.deepEqual(await all(readCriLog(p, { since: new Date('2026-12-02T10:00:01Z') })), ['stderr:b', 'stdout:c']);
  assert.deepEqual(await all(readCriLog(p, { stream: 'stdout' })), ['stdout:a', 'stdout:c']);
});

test('readCriLog: a missing file is a clear error', async () => {
  await assert.rejects(all(readCriLog('/nonexistent/nodelet/0.log')), /container log file "\/nonexistent\/nodelet\/0\.log" does not exist/);
});

test('followCriLog yields appended lines, survives rotation, and stops when finished', async (t) => {
  const p = await tempLog(t, `${T1} stdout F first\n`);
  let finished = false;
  const got: string[] = [];
  const it = followCriLog(p, { pollMs: 10, isFinished: async () => finished })[Symbol.asyncIterator]();
  const next = async (): Promise<string> => {
    const r = await it.next();
    assert.equal(r.done, false);
    return (r.value as CriLogEntry).content;
  };
  got.push(await next());
  await appendFile(p, `${T2} stdout P sec`);
  await appendFile(p, `ond-part\n${T2} stdout F !\n`); // a record split across writes
  got.push(await next());
  await rename(p, `${p}.1`); // rotation: kubelet renames and the runtime reopens a new file
  await writeFile(p, `${T3} stderr F after-rotate\n`);
  got.push(await next());
  finished = true;
  assert.equal((await it.next()).done, true);
  assert.deepEqual(got, ['first', 'second-part!', 'after-rotate']);
});

test('followCriLog rejects with AbortError when aborted', async (t) => {
  const p = await tempLog(t, '');
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 30);
  await assert.rejects(all(followCriLog(p, { pollMs: 5, signal: ac.signal })), { name: 'AbortError' });
});

test('readCriLog streams the file read by read instead of loading it whole', async (t) => {
  // 4 MiB of lines: the reader is far from the end when the first entry comes out, so the last
  // line rewritten then is read as rewritten (a whole-file read would have the old bytes).
  const line = `${T1} stdout F ${'x'.repeat(1000)}\n`;
  const p = await tempLog(t, line.repeat(4 * 1024));
  let count = 0;
  let rewritten = false;
  let last = '';
  for await (const e of readCriLog(p)) {
    count++;
    last = e.content;
    if (!rewritten) {
      rewritten = true;
      const { open } = await import('node:fs/promises');
      const fh = await open(p, 'r+');
      await fh.write('y'.repeat(1000), line.length * (4 * 1024 - 1) + line.length - 1001);
      await fh.close();
    }
  }
  assert.equal(count, 4 * 1024);
  assert.equal(last, 'y'.repeat(1000));
});

test('readCriLog decodes a UTF-8 character split across two reads', async (t) => {
  // The reader reads 64 KiB at a time: put a 3-byte character across that boundary.
  const prefix = `${T1} stdout F `;
  const p = await tempLog(t, `${prefix}${'a'.repeat(64 * 1024 - Buffer.byteLength(prefix) - 1)}€b\n`);
  const [entry] = await all(readCriLog(p));
  assert.ok(entry!.endsWith('a€b'), entry!.slice(-10));
});

test('tail is found from the end: block boundaries, partial records, an unterminated last line, a stream filter', async (t) => {
  // Lines of varied length so that newlines fall at, just before and just after 64 KiB boundaries.
  const lines: string[] = [];
  for (let i = 0; i < 3000; i++) {
    if (i % 7 === 3) lines.push(`${T1} stdout P part${i}-`);
    lines.push(`${T1} ${i % 5 === 0 ? 'stderr' : 'stdout'} F line${i}${'y'.repeat((i * 37) % 200)}`);
  }
  const p = await tempLog(t, `${lines.join('\n')}\n${T2} stdout F unterminated`);
  const every = await all(readCriLog(p));
  for (const n of [0, 1, 2, 7, 100, 1234, 2999, 3000, 5000]) {
    assert.deepEqual(await all(readCriLog(p, { tail: n })), every.slice(Math.max(0, every.length - n)), `tail ${n}`);
  }
  const stderr = await all(readCriLog(p, { stream: 'stderr' }));
  assert.deepEqual(await all(readCriLog(p, { tail: 10, stream: 'stderr' })), stderr.slice(-10));
  assert.ok(every.some((l) => /^stdout:part3-line3/.test(l)), 'partial records are joined');
});

test('tail reads the newest rotated files when the current one is short; follow crosses a rotation', async (t) => {
  const p = await tempLog(t, '');
  const rec = (s: string) => `${T1} stdout F ${s}\n`;
  await writeFile(`${p}.20260101-000001`, rec('r1-a') + rec('r1-b'));
  await writeFile(`${p}.20260101-000002`, rec('r2-a') + rec('r2-b'));
  await writeFile(`${p}.20260101-000000.gz`, 'not read');
  await writeFile(p, rec('cur-a'));
  assert.deepEqual(await all(readCriLog(p, { tail: 2 })), ['stdout:r2-b', 'stdout:cur-a']);
  assert.deepEqual(await all(readCriLog(p, { tail: 4 })), ['stdout:r1-b', 'stdout:r2-a', 'stdout:r2-b', 'stdout:cur-a']);
  assert.deepEqual(await all(readCriLog(p, { tail: 50 })), ['stdout:r1-a', 'stdout:r1-b', 'stdout:r2-a', 'stdout:r2-b', 'stdout:cur-a']);
  assert.deepEqual(await all(readCriLog(p)), ['stdout:cur-a'], 'without tail only the current file, as kubelet');

  // follow: rename 0.log away mid-stream (as the log manager does) and write a new one
  const ac = new AbortController();
  const seen: string[] = [];
  let first!: () => void;
  const started = new Promise<void>((r) => (first = r));
  const done = (async () => {
    for await (const e of followCriLog(p, { tail: 1, pollMs: 5, signal: ac.signal })) {
      seen.push(e.content);
      first();
      if (e.content === 'after') ac.abort();
    }
  })().catch((err: unknown) => {
    if ((err as Error).name !== 'AbortError') throw err;
  });
  await started;
  await appendFile(p, rec('before'));
  await rename(p, `${p}.20260101-000003`);
  await writeFile(p, rec('after'));
  await done;
  assert.deepEqual(seen, ['cur-a', 'before', 'after']);
});

test('a read between a rotation\'s rename and the runtime\'s reopen waits for the new file instead of failing', async (t) => {
  const p = await tempLog(t, '');
  const rec = (s: string) => `${T1} stdout F ${s}\n`;
  // The log manager renamed 0.log; the runtime has not made the new one yet.
  await rm(p);
  await writeFile(`${p}.20260101-000001`, rec('r-a') + rec('r-b'));
  let opened = false;
  const read = all(readCriLog(p, { tail: 2, opened: () => (opened = true) }));
  await new Promise((r) => setTimeout(r, 60));
  assert.equal(opened, false, 'still waiting for the new file');
  await writeFile(p, rec('new-a'));
  assert.deepEqual(await read, ['stdout:r-b', 'stdout:new-a']);
  assert.equal(opened, true);
  // Without a rotated file, a missing log is an error (nothing will make it).
  await assert.rejects(all(readCriLog(join(p, '..', '1.log'))), /does not exist/);
});

test('tail of a 40 MiB file reads only its end', async (t) => {
  const line = `${T1} stdout F ${'z'.repeat(1000)}\n`;
  const p = await tempLog(t, line.repeat(40 * 1024) + `${T2} stdout F last\n`);
  const { open } = await import('node:fs/promises');
  const fh = await open(p, 'r');
  t.after(() => fh.close());
  let bytes = 0;
  const read = fh.read.bind(fh);
  (fh as unknown as { read: typeof fh.read }).read = (async (...args: Parameters<typeof fh.read>) => {
    const r = await (read as (...a: unknown[]) => Promise<{ bytesRead: number }>)(...args);
    bytes += r.bytesRead;
    return r;
  }) as typeof fh.read;
  const { findTailStart } = await import('./log-tail.js');
  const { offset, count } = await findTailStart(fh, 10);
  assert.equal(count, 10);
  assert.ok(bytes <= 128 * 1024, `read ${bytes} bytes to find 10 lines`);
  assert.equal((await all(readCriLog(p, { tail: 10 }))).length, 10);
  assert.ok(offset > 40 * 1024 * 1024 - 20_000);
});

test('a read ends where the file ended when it was opened, though a writer keeps appending', async (t) => {
  const rec = (s: string) => `${T1} stdout F ${s}\n`;
  for (const [opts, want] of [[{ tail: 2 }, ['stdout:b', 'stdout:c']], [{}, ['stdout:a', 'stdout:b', 'stdout:c']]] as const) {
    const p = await tempLog(t, rec('a') + rec('b') + rec('c') + `${T2} stdout F unterminat`);
    const got: string[] = [];
    let appended = false;
    for await (const e of readCriLog(p, opts)) {
      got.push(`${e.stream}:${e.content}`);
      if (!appended) {
        appended = true;
        await appendFile(p, 'ed\n' + rec('late').repeat(3));
      }
    }
    assert.deepEqual(got, want, JSON.stringify(opts));
  }
});
