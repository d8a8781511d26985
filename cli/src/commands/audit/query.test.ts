// `nodelet audit`'s reading of an audit log and its rotated files, and its filters.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditQueryOf } from '../audit.js';
import { auditLogFiles, formatAuditTable, queryAuditLog, type AuditEventLine } from './query.js';

const ev = (o: Partial<AuditEventLine> & { at: string }): AuditEventLine => ({
  auditID: `id-${o.at}`, stage: 'ResponseComplete', verb: 'get', requestURI: '/api/v1/namespaces/default/pods/web',
  user: { username: 'alice' }, sourceIPs: ['10.0.0.5'], objectRef: { resource: 'pods', namespace: 'default', name: 'web' },
  responseStatus: { code: 200 }, requestReceivedTimestamp: `2026-12-04T${o.at}.123456Z`, stageTimestamp: `2026-12-04T${o.at}.223456Z`, ...o,
});

describe('nodelet audit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-audit-cli-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, 'audit.log');
  const lines = (evs: AuditEventLine[]): string => evs.map((e) => JSON.stringify(e) + '\n').join('');
  // Oldest events in the older backup; the delete is in the newer one, a later create in the current file.
  writeFileSync(join(dir, 'audit-2026-12-04T10-00-00.000.log'), lines([ev({ at: '09:00:00', verb: 'create' })]));
  writeFileSync(join(dir, 'audit-2026-12-04T11-00-00.000.log'), lines([
    ev({ at: '10:30:00', verb: 'delete', stage: 'RequestReceived', user: { username: 'mallory' } }),
    ev({ at: '10:30:00', verb: 'delete', user: { username: 'mallory' }, sourceIPs: ['192.0.2.9'] }),
    ev({ at: '10:40:00', verb: 'delete', objectRef: { resource: 'pods', namespace: 'other', name: 'web' }, user: { username: 'bob' } }),
  ]));
  writeFileSync(log, lines([
    ev({ at: '11:30:00', verb: 'create', user: { username: 'system:admin' }, impersonatedUser: { username: 'carol' } }),
    ev({ at: '11:31:00', verb: 'delete', objectRef: { resource: 'deployments', apiGroup: 'apps', namespace: 'default', name: 'web' } }),
    ev({ at: '11:32:00', verb: 'get', objectRef: { resource: 'pods', subresource: 'log', namespace: 'default', name: 'web' } }),
  ]) + '{"cut by a crash');
  writeFileSync(join(dir, 'audit-notes.log'), 'not a backup\n');

  it('reads the rotated files oldest first, then the current one', () => {
    assert.deepEqual(auditLogFiles(log), [join(dir, 'audit-2026-12-04T10-00-00.000.log'), join(dir, 'audit-2026-12-04T11-00-00.000.log'), log]);
  });

  it('answers "who deleted pod default/web"', async () => {
    const q = auditQueryOf({ verb: 'delete', resource: 'pods', name: 'web', namespace: 'default' }, Date.now());
    const { events, malformed } = await queryAuditLog(auditLogFiles(log), q);
    assert.equal(malformed, 1);
    assert.deepEqual(events.map((e) => e.user?.username), ['mallory'], 'one line per request (its last stage), and not the deployment');
    const table = formatAuditTable(events);
    assert.match(table, /^TIME +USER +VERB +RESOURCE +NAMESPACE +NAME +CODE +SOURCE +AUDIT-ID\n/);
    assert.match(table, /2026-12-04T10:30:00Z +mallory +delete +pods +default +web +200 +192\.0\.2\.9 +id-10:30:00\n$/);
  });

  it('filters by group, subresource, impersonated user, stage and time', async () => {
    const files = auditLogFiles(log);
    const run = async (f: Parameters<typeof auditQueryOf>[0], now = Date.now()): Promise<string[]> => (await queryAuditLog(files, auditQueryOf(f, now))).events.map((e) => e.auditID);
    assert.deepEqual(await run({ resource: 'deployments.apps' }), ['id-11:31:00']);
    assert.deepEqual(await run({ resource: 'pods/log' }), ['id-11:32:00']);
    assert.deepEqual(await run({ user: 'carol' }), ['id-11:30:00']);
    assert.deepEqual(await run({ stage: 'RequestReceived' }), ['id-10:30:00']);
    assert.equal((await run({ stage: 'all' })).length, 7);
    assert.deepEqual(await run({ since: '1h' }, Date.parse('2026-12-04T12:00:00Z')), ['id-11:30:00', 'id-11:31:00', 'id-11:32:00']);
    const table = formatAuditTable((await queryAuditLog(files, auditQueryOf({ user: 'carol' }, Date.now()))).events);
    assert.match(table, /system:admin \(as carol\)/);
  });

  it('refuses bad flag values', () => {
    assert.throws(() => auditQueryOf({ since: '1' }, 0), /duration/);
    assert.throws(() => auditQueryOf({ stage: 'Done' }, 0), /--stage must be one of/);
  });
});
