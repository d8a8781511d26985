// The audit log file's rotation, with lumberjack's semantics (what kube-apiserver's log backend uses).
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backupName, listBackups, RotatingFile } from './rotating-file.js';

const MB = 1024 * 1024;

describe('audit log rotation', () => {
  const dirs: string[] = [];
  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const tmp = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'nodelet-audit-rot-'));
    dirs.push(d);
    return d;
  };

  it('names backups <stem>-<UTC time><ext> and reads the time back', () => {
    const t = Date.UTC(2026, 11, 4, 19, 5, 7, 42);
    assert.equal(backupName('/var/log/audit.log', t), '/var/log/audit-2026-12-04T19-05-07.042.log');
    assert.deepEqual(listBackups('/var/log/audit.log', ['audit.log', 'audit-2026-12-04T19-05-07.042.log', 'audit-x.log', 'other-2026-12-04T19-05-07.042.log']), [
      { name: 'audit-2026-12-04T19-05-07.042.log', time: t },
    ]);
  });

  it('rotates before a write would pass maxsize, keeps maxbackup backups, creates 0600 files in a new directory', () => {
    const dir = join(tmp(), 'sub', 'dir');
    const path = join(dir, 'audit.log');
    let now = Date.UTC(2026, 0, 1);
    const f = new RotatingFile(path, { maxSizeMB: 1, maxAgeDays: 0, maxBackups: 2, now: () => now });
    const line = 'x'.repeat(MB / 2 - 1) + '\n';
    for (let i = 0; i < 7; i++) {
      f.write(line);
      now += 1000;
    }
    f.close();
    // 7 half-MB lines: two per file; the 1st…3rd rotations left 3 backups, the oldest pruned.
    const names = readdirSync(dir).sort();
    assert.deepEqual(names, ['audit-2026-01-01T00-00-04.000.log', 'audit-2026-01-01T00-00-06.000.log', 'audit.log']);
    assert.equal(statSync(path).size, MB / 2);
    assert.equal(statSync(join(dir, names[0]!)).size, MB);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(dir).mode & 0o777, 0o700);
  });

  it('appends to an existing file and counts its size', () => {
    const path = join(tmp(), 'audit.log');
    writeFileSync(path, 'y'.repeat(MB - 10));
    const f = new RotatingFile(path, { maxSizeMB: 1, maxAgeDays: 0, maxBackups: 0, now: () => Date.UTC(2026, 0, 1) });
    f.write('short\n');
    f.write('this one does not fit\n');
    f.close();
    assert.equal(readFileSync(path, 'utf8'), 'this one does not fit\n');
    assert.equal(readdirSync(join(path, '..')).length, 2);
  });

  it('deletes backups older than maxage days by the time in their name', () => {
    const dir = tmp();
    const path = join(dir, 'audit.log');
    const day = 24 * 3600 * 1000;
    const now = Date.UTC(2026, 5, 10);
    for (const t of [now - 10 * day, now - 3 * day, now - day]) writeFileSync(backupName(path, t), 'old\n');
    writeFileSync(join(dir, 'audit-notastamp.log'), 'kept: not a backup name\n');
    const f = new RotatingFile(path, { maxSizeMB: 0, maxAgeDays: 2, maxBackups: 0, now: () => now });
    f.write('a\n');
    f.rotate();
    f.close();
    assert.deepEqual(readdirSync(dir).sort(), ['audit-2026-06-09T00-00-00.000.log', 'audit-2026-06-10T00-00-00.000.log', 'audit-notastamp.log', 'audit.log']);
  });

  it('refuses a single line larger than the limit', () => {
    const f = new RotatingFile(join(tmp(), 'audit.log'), { maxSizeMB: 1, maxAgeDays: 0, maxBackups: 0 });
    assert.throws(() => f.write('z'.repeat(MB + 1)), /write length 1048577 exceeds maximum file size 1048576/);
    f.close();
  });
});
