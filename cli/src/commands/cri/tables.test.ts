// Golden tests: nodelet cri tables against crictl's documented columns and formats
// (cri-tools cmd/crictl: tabwriter minwidth 20 / padding 3, 13-char IDs, go-units sizes and ages).
// Goldens live in testing/golden/*.txt; each was checked by hand against those rules (see the
// width assertions below). Regenerate with UPDATE_GOLDEN=1 only after such a check.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { containerStatsTable, containersTable, imagesTable, podStatsTable, podsTable, versionText } from './tables.js';
import { CONTAINERS, IMAGES, NOW_MS, PODS, POD_STATS_AFTER, POD_STATS_BEFORE, STATS_AFTER, STATS_BEFORE } from './testing/fixtures.js';

function golden(name: string, actual: string): void {
  const path = fileURLToPath(new URL(`./testing/golden/${name}.txt`, import.meta.url));
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(path, actual);
  assert.equal(actual, readFileSync(path, 'utf8'), `golden ${name}`);
}

/** Every column but the last starts at a multiple-of-layout offset: max(20, widest + 3). */
function assertTabwriterLayout(table: string): void {
  const lines = table.trimEnd().split('\n');
  const header = lines[0]!;
  // Column starts are where a header word begins after ≥ 3 spaces (crictl headers have single spaces inside).
  const starts = [0, ...[...header.matchAll(/ {3,}(?=\S)/g)].map((m) => m.index! + m[0].length)];
  for (let i = 0; i + 1 < starts.length; i++) {
    const width = starts[i + 1]! - starts[i]!;
    const widest = Math.max(...lines.map((l) => l.slice(starts[i], starts[i + 1]).trimEnd().length));
    assert.equal(width, Math.max(20, widest + 3), `column ${i} width in:\n${table}`);
  }
}

test('version: four lines, two spaces after the colon', () => {
  const text = versionText({ version: '0.1.0', runtimeName: 'containerd', runtimeVersion: '1.6.20~ds1', runtimeApiVersion: 'v1' });
  golden('version', text);
  assert.equal(text, 'Version:  0.1.0\nRuntimeName:  containerd\nRuntimeVersion:  1.6.20~ds1\nRuntimeApiVersion:  v1\n');
});

test('ps: columns, newest first, truncated IDs, digest image shortened, pod labels or "unknown"', () => {
  const text = containersTable(CONTAINERS, { nowMs: NOW_MS });
  golden('ps', text);
  assertTabwriterLayout(text);
  const [header, first, second] = text.split('\n');
  assert.equal(header!.split(/ {3,}/).join('|'), 'CONTAINER|IMAGE|CREATED|STATE|NAME|ATTEMPT|POD ID|POD|NAMESPACE');
  assert.match(first!, /^7f31189f1b9e3 +127\.0\.0\.1:5000\/busybox:latest +42 seconds ago +Running +nginx +0 +c186705e83d18 +web-7d4b9c +default$/);
  assert.match(second!, /^f00dfeed01234 +d197a53663791 +2 days ago +Exited +sidecar +3 +5b0e0f5c0b9d4 +unknown +unknown$/);
});

test('ps --no-trunc keeps full IDs and image digests', () => {
  const text = containersTable(CONTAINERS.slice(0, 1), { nowMs: NOW_MS, noTrunc: true });
  assert.ok(text.includes(CONTAINERS[0]!.id) && text.includes(CONTAINERS[0]!.image!.image));
});

test('pods: columns, states Ready/NotReady, runtime handler or (default), ages', () => {
  const text = podsTable(PODS, { nowMs: NOW_MS });
  golden('pods', text);
  assertTabwriterLayout(text);
  const [header, first, second] = text.split('\n');
  assert.equal(header!.split(/ {3,}/).join('|'), 'POD ID|CREATED|STATE|NAME|NAMESPACE|ATTEMPT|RUNTIME');
  assert.match(first!, /^c186705e83d18 +About a minute ago +Ready +web-7d4b9c +default +0 +\(default\)$/);
  assert.match(second!, /^5b0e0f5c0b9d4 +3 hours ago +NotReady +old-pod +kube-system +2 +runc$/);
});

test('images: one row per tag, <none> for untagged, 13-char IDs, 3-digit decimal sizes', () => {
  const text = imagesTable(IMAGES, {});
  golden('images', text);
  assertTabwriterLayout(text);
  const rows = text.trimEnd().split('\n').map((l) => l.split(/ {3,}/));
  assert.deepEqual(rows, [
    ['IMAGE', 'TAG', 'IMAGE ID', 'SIZE'],
    ['127.0.0.1:5000/busybox', 'latest', 'd197a53663791', '2.13MB'],
    ['127.0.0.1:5000/busybox', '1.36', 'd197a53663791', '2.13MB'],
    ['127.0.0.1:5000/pause', '3.9', 'a34a0db1f2cb6', '687kB'],
    ['registry.example/tools', '<none>', '0123456789abc', '1.23GB'],
  ]);
  const withDigests = imagesTable(IMAGES, { digests: true, pinned: true });
  golden('images-digests', withDigests);
  assert.deepEqual(withDigests.split('\n')[0]!.split(/ {3,}/), ['IMAGE', 'TAG', 'DIGEST', 'IMAGE ID', 'SIZE', 'PINNED']);
  assert.match(withDigests.split('\n')[3]!, /^127\.0\.0\.1:5000\/pause +3\.9 +10e2736414c66 +a34a0db1f2cb6 +687kB +true$/);
});

test('stats: CPU % from two samples, go-units sizes, new and idle containers skipped unless -a', () => {
  const text = containerStatsTable(STATS_AFTER, STATS_BEFORE, {});
  golden('stats', text);
  assertTabwriterLayout(text);
  const rows = text.trimEnd().split('\n').map((l) => l.split(/ {3,}/));
  assert.deepEqual(rows, [
    ['CONTAINER', 'NAME', 'CPU %', 'MEM', 'DISK', 'INODES', 'SWAP'],
    ['7f31189f1b9e3', 'nginx', '1.23', '462.8kB', '20.48kB', '8', '0B'],
  ]);
  const all = containerStatsTable(STATS_AFTER, STATS_BEFORE, { all: true });
  assert.match(all, /\nf00dfeed01234 +sidecar +0\.00 +0B +4\.096kB +3 +0B\n/);
  assert.ok(!all.includes('aaaabbbbcccc'), 'a container missing from the first sample has no rate yet');
});

test('statsp: POD, POD ID, CPU %, MEM', () => {
  const text = podStatsTable(POD_STATS_AFTER, POD_STATS_BEFORE);
  golden('statsp', text);
  assertTabwriterLayout(text);
  assert.deepEqual(text.trimEnd().split('\n').map((l) => l.split(/ {3,}/)), [
    ['POD', 'POD ID', 'CPU %', 'MEM'],
    ['web-7d4b9c', 'c186705e83d18', '25.00', '10.49MB'],
  ]);
});
