import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { EndpointSlice, Service } from '@nodelet/api';
import { buildModel } from './model.js';
import { needsFullSync, renderPartial, renderStaleChainDeletes } from './partial.js';
import { buildTableState, renderFull, type RenderOptions } from './render.js';
import { service, slice } from './testing/fixtures.js';

const opts: RenderOptions = { nodeName: 'n1', serviceCIDR: '10.96.0.0/16', clusterCIDR: '10.244.0.0/16', localhostNodePorts: true };
const state = (services: Service[], slices: EndpointSlice[], o: Partial<RenderOptions> = {}) => buildTableState(buildModel({ services, slices, nodeName: 'n1', sctp: true }), { ...opts, ...o });
const eps = (...last: number[]) => last.map((n) => ({ ip: `10.244.0.${n}` }));
/** Chain names with their hash replaced, so the goldens read. */
const h = (s: string): string => s.replace(/-[A-Z2-7]{8}-/g, '-H-');
const lines = (script: string): string[] => h(script).trim().split('\n');

const web = service('web', '10.96.0.5');
const db = service('db', '10.96.0.6');

test('a changed endpoint rewrites only its service chain, adds the new endpoint chain and flushes the old one; other services untouched', () => {
  const prev = state([web, db], [slice('web', eps(11, 12)), slice('db', eps(21))]);
  const next = state([web, db], [slice('web', eps(11, 13)), slice('db', eps(21))]);
  assert.equal(needsFullSync(prev, next), undefined);
  const tx = renderPartial(prev, next);
  assert.deepEqual(lines(tx.script), [
    'add chain ip nodelet-proxy service-H-default/web/tcp/',
    'add chain ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.13/8080',
    'flush chain ip nodelet-proxy service-H-default/web/tcp/',
    'add rule ip nodelet-proxy service-H-default/web/tcp/ ip daddr 10.96.0.5 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade',
    'add rule ip nodelet-proxy service-H-default/web/tcp/ numgen random mod 2 vmap { 0 : goto endpoint-H-default/web/tcp/__10.244.0.11/8080, 1 : goto endpoint-H-default/web/tcp/__10.244.0.13/8080 }',
    'flush chain ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.13/8080',
    'add rule ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.13/8080 ip saddr 10.244.0.13 jump mark-for-masquerade',
    'add rule ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.13/8080 meta l4proto tcp dnat to 10.244.0.13:8080',
    'flush chain ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.12/8080',
  ]);
  assert.deepEqual(tx.staleChains.map(h), ['endpoint-H-default/web/tcp/__10.244.0.12/8080']);
  assert.equal(tx.elementChanges, 0, 'the service-ips element still points at the same chain');
  assert.equal(renderPartial(next, next).script, '', 'nothing changed, nothing to write');
});

test('endpoints 0 → 1 swap the reject element for the dispatch element; a removed service deletes its elements, then flushes its chains', () => {
  const none = state([web], [slice('web', [])]);
  const one = state([web], [slice('web', eps(11))]);
  const up = lines(renderPartial(none, one).script);
  assert.deepEqual(up.filter((l) => l.includes('element')), [
    'add element ip nodelet-proxy service-ips { 10.96.0.5 . tcp . 80 : goto service-H-default/web/tcp/ }',
    'delete element ip nodelet-proxy no-endpoint-services { 10.96.0.5 . tcp . 80 }',
  ]);
  const gone = renderPartial(one, state([], []));
  assert.deepEqual(lines(gone.script), [
    'delete element ip nodelet-proxy cluster-ips { 10.96.0.5 }',
    'delete element ip nodelet-proxy service-ips { 10.96.0.5 . tcp . 80 }',
    'flush chain ip nodelet-proxy service-H-default/web/tcp/',
    'flush chain ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.11/8080',
  ]);
  assert.deepEqual(lines(renderStaleChainDeletes(gone.staleChains)), [
    'add chain ip nodelet-proxy service-H-default/web/tcp/',
    'delete chain ip nodelet-proxy service-H-default/web/tcp/',
    'add chain ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.11/8080',
    'delete chain ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.11/8080',
  ]);
});

test('affinity sets: added before the rules that use them, deleted after the chains that used them are flushed', () => {
  const sticky = service('web', '10.96.0.5', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } });
  const a = state([sticky], [slice('web', eps(11))]);
  const b = state([sticky], [slice('web', eps(12))]);
  const l = lines(renderPartial(a, b).script);
  const add = l.indexOf('add set ip nodelet-proxy affinity-H-default/web/tcp/__10.244.0.12/8080 { type ipv4_addr; flags dynamic,timeout; timeout 600s; }');
  const use = l.findIndex((x) => x.includes('update @affinity-H-default/web/tcp/__10.244.0.12/8080'));
  const flush = l.indexOf('flush chain ip nodelet-proxy endpoint-H-default/web/tcp/__10.244.0.11/8080');
  const del = l.indexOf('delete set ip nodelet-proxy affinity-H-default/web/tcp/__10.244.0.11/8080');
  assert.ok(add === 0 && use > add && flush > use && del > flush, l.join('\n'));
  const longer = state([service('web', '10.96.0.5', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 900 } } })], [slice('web', eps(11))]);
  assert.equal(needsFullSync(a, longer), 'affinity timeout changed');
  assert.equal(needsFullSync(a, state([sticky], [slice('web', eps(11))], { nodePortIPs: ['192.168.1.5'] })), 'base chains changed');
});

/** nft needs root; the transactions run in a network namespace of this test's own. */
const canRun = process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0;

test('in a netns: full table, then the partial transactions (nft -c first), end equal to the full table of the new state', { skip: canRun ? false : 'needs root and nft' }, (t) => {
  const ns = `pxt-${process.pid}`;
  const sh = (args: string[], input?: string) => spawnSync('ip', ['netns', 'exec', ns, ...args], { input, encoding: 'utf8' });
  assert.equal(spawnSync('ip', ['netns', 'add', ns]).status, 0);
  t.after(() => spawnSync('ip', ['netns', 'del', ns]));
  const apply = (script: string, check = true): void => {
    if (check) assert.equal(sh(['nft', '-c', '-f', '-'], script).status, 0, `nft -c rejected:\n${script}\n${sh(['nft', '-c', '-f', '-'], script).stderr}`);
    const r = sh(['nft', '-f', '-'], script);
    assert.equal(r.status, 0, `nft -f failed:\n${script}\n${r.stderr}`);
  };
  const listed = (): string[] => sh(['nft', 'list', 'table', 'ip', 'nodelet-proxy']).stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
  const np = service('np', '10.96.0.7', { type: 'NodePort', externalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] });
  const steps = [
    state([web, db], [slice('web', eps(11, 12)), slice('db', [])]),
    state([web, db, np], [slice('web', eps(11, 13)), slice('db', eps(21)), slice('np', [{ ip: '10.244.0.31', node: 'n1' }], [{ port: 80, protocol: 'TCP' }])]),
    state([db, np], [slice('db', []), slice('np', [{ ip: '10.244.0.32', node: 'n2' }], [{ port: 80, protocol: 'TCP' }])]),
  ];
  apply(renderFull(steps[0]!, opts));
  for (let i = 1; i < steps.length; i++) {
    const tx = renderPartial(steps[i - 1]!, steps[i]!);
    apply(tx.script);
    if (tx.staleChains.length) apply(renderStaleChainDeletes(tx.staleChains));
    const live = listed();
    assert.ok(live.some((l) => l.startsWith('chain service-')), live.join('\n'));
    apply(renderFull(steps[i]!, opts), false);
    assert.deepEqual(live, listed(), `after step ${i} the table equals a full write of the same state`);
  }
});
