import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { listNetworkConfigs, loadNetworkConfig, parseNetworkConfig } from './conflist.js';
import type { CniError } from './errors.js';

const good = { cniVersion: '1.0.0', name: 'n1', plugins: [{ type: 'bridge', ipam: { type: 'host-local' }, someUnknown: { kept: true } }] };

function rejects(doc: unknown, field: RegExp): void {
  assert.throws(
    () => parseNetworkConfig(typeof doc === 'string' ? doc : JSON.stringify(doc), 'x.conflist'),
    (err: CniError) => err.cniCode === 7 && field.test(err.details ?? '') && /^x\.conflist: /.test(err.details ?? ''),
  );
}

test('valid list parses; unknown fields pass through; flags default false', () => {
  const l = parseNetworkConfig(JSON.stringify(good));
  assert.equal(l.name, 'n1');
  assert.deepEqual(l.plugins[0]!.someUnknown, { kept: true });
  assert.equal(l.disableCheck, false);
});

test('bad conflists name the offending field', () => {
  rejects('{"name": ', /\(document\): malformed JSON/);
  rejects([], /\(document\): must be a JSON object/);
  rejects({ ...good, name: undefined }, /name: is required/);
  rejects({ ...good, name: 'bad name' }, /name: "bad name" must match/);
  rejects({ ...good, cniVersion: undefined }, /cniVersion: is required/);
  rejects({ ...good, cniVersion: 'one' }, /cniVersion: "one" is not a version/);
  rejects({ ...good, cniVersion: '9.9.9' }, /cniVersion: none of \[9\.9\.9\] is supported/);
  rejects({ ...good, cniVersions: ['1.0.0', 3] }, /cniVersions\[1\]/);
  rejects({ ...good, plugins: [] }, /plugins: must not be empty/);
  rejects({ ...good, plugins: {} }, /plugins: must be a list/);
  rejects({ ...good, plugins: [{ type: 'bridge' }, { bridge: 'x' }] }, /plugins\[1\]\.type: is required/);
  rejects({ ...good, plugins: [{ type: '../../bin/sh' }] }, /plugins\[0\]\.type: .* not a plain binary name/);
  rejects({ ...good, plugins: [{ type: 'p', ipam: {} }] }, /plugins\[0\]\.ipam\.type: is required/);
  rejects({ ...good, plugins: [{ type: 'p', capabilities: { portMappings: 'yes' } }] }, /plugins\[0\]\.capabilities\.portMappings/);
  rejects({ ...good, disableCheck: 'true' }, /disableCheck: must be true or false/);
  rejects({ cniVersion: '1.0.0', name: 'n' }, /plugins: is required/);
});

test('legacy single-plugin .conf is up-converted to a list', () => {
  const l = parseNetworkConfig(JSON.stringify({ cniVersion: '0.4.0', name: 'old', type: 'bridge', bridge: 'b0' }));
  assert.deepEqual(l.plugins, [{ type: 'bridge', bridge: 'b0' }]);
});

test('directory loading: sorted, skips invalid and other extensions, first valid or by name', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'nlc-conf-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, '05-broken.conflist'), '{');
  await writeFile(join(dir, '10-a.conflist'), JSON.stringify({ ...good, name: 'a' }));
  await writeFile(join(dir, '20-b.conf'), JSON.stringify({ cniVersion: '1.0.0', name: 'b', type: 'bridge' }));
  await writeFile(join(dir, '00-ignored.txt'), JSON.stringify({ ...good, name: 'txt' }));
  assert.equal((await loadNetworkConfig(dir)).name, 'a');
  assert.equal((await loadNetworkConfig(dir, { name: 'b' })).name, 'b');
  await assert.rejects(loadNetworkConfig(dir, { name: 'zzz' }), (err: CniError) => /no network "zzz"/.test(err.message) && /05-broken\.conflist: \(document\): malformed JSON/.test(err.message));
  const ls = await listNetworkConfigs(dir);
  assert.deepEqual(ls.map((e) => [e.file.slice(dir.length + 1), e.list?.name ?? 'error']), [['05-broken.conflist', 'error'], ['10-a.conflist', 'a'], ['20-b.conf', 'b']]);
  await assert.rejects(loadNetworkConfig(join(dir, 'nope')), { code: 'ERR_NOT_FOUND' });
});
