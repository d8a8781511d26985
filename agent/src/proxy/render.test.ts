import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { buildModel } from './model.js';
import { renderDelete, renderTable, type RenderOptions } from './render.js';
import { service, slice } from './testing/fixtures.js';

const SVC = 'service-[A-Z2-7]{8}-';
const EP = 'endpoint-[A-Z2-7]{8}-';
const opts: RenderOptions = { nodeName: 'n1', serviceCIDR: '10.96.0.0/16', clusterCIDR: '10.244.0.0/16', localhostNodePorts: true };

function render(services: Parameters<typeof buildModel>[0]['services'], slices: Parameters<typeof buildModel>[0]['slices'], o: Partial<RenderOptions> = {}, carry?: Parameters<typeof renderTable>[2]): string {
  return renderTable(buildModel({ services, slices, nodeName: 'n1', sctp: true }), { ...opts, ...o }, carry).script;
}

/** The rules of one chain (the lines between `chain <name> {` and its `}`), tabs stripped. */
function chain(script: string, prefix: string): string[] {
  const lines = script.split('\n');
  const start = lines.findIndex((l) => new RegExp(`^chain ${prefix}`).test(l.trim()));
  assert.ok(start >= 0, `no chain ${prefix}`);
  const out: string[] = [];
  for (let i = start + 1; lines[i]!.trim() !== '}'; i++) out.push(lines[i]!.trim());
  return out;
}

/** nft -c needs root (it talks to the kernel without changing anything). */
const canCheck = process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0;
function nftCheck(script: string): void {
  const r = spawnSync('nft', ['-c', '-f', '-'], { input: script, encoding: 'utf8' });
  assert.equal(r.status, 0, `nft -c rejected the table:\n${r.stderr}`);
}

test('the base table: one transaction that replaces the table, hooks, checks and the service CIDR reject', (t) => {
  const s = renderTable([], opts).script;
  assert.deepEqual(s.split('\n').slice(0, 3), ['table ip nodelet-proxy', 'delete table ip nodelet-proxy', 'table ip nodelet-proxy {']);
  assert.deepEqual(chain(s, 'cluster-ips-check'), [
    'ip daddr @cluster-ips reject comment "reject traffic to invalid ports of ClusterIPs"',
    'ip daddr 10.96.0.0/16 reject comment "reject traffic to unallocated ClusterIPs"',
  ]);
  assert.deepEqual(chain(s, 'filter-forward'), ['type filter hook forward priority -110; policy accept;', 'ct state new jump service-endpoints-check', 'ct state new jump cluster-ips-check']);
  assert.deepEqual(chain(s, 'filter-output-post-dnat'), ['type filter hook output priority -90; policy accept;', 'ct state new jump cluster-ips-check']);
  assert.deepEqual(chain(s, 'masquerading'), ['meta mark & 0x4000 == 0 return', 'meta mark set meta mark ^ 0x4000', 'masquerade fully-random']);
  assert.deepEqual(chain(s, 'services'), [
    'ip daddr . meta l4proto . th dport vmap @service-ips',
    'fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports',
    'ip daddr 127.0.0.1 meta l4proto . th dport vmap @service-nodeports',
  ]);
  if (canCheck) nftCheck(s);
  else t.diagnostic('nft -c skipped (needs root and nft)');
});

test('ClusterIP: verdict map entry, numgen over the ready endpoints, masquerade from outside the cluster CIDR, hairpin', (t) => {
  const s = render([service('web', '10.96.0.5')], [slice('web', [{ ip: '10.244.0.11' }, { ip: '10.244.0.12' }, { ip: '10.244.0.13' }, { ip: '10.244.0.14', ready: false }])]);
  assert.match(s, /elements = \{ 10\.96\.0\.5 \. tcp \. 80 : goto service-[A-Z2-7]{8}-default\/web\/tcp\/ \}/);
  const svc = chain(s, SVC);
  assert.equal(svc[0], 'ip daddr 10.96.0.5 tcp dport 80 ip saddr != 10.244.0.0/16 jump mark-for-masquerade');
  assert.match(svc[1]!, /^numgen random mod 3 vmap \{ 0 : goto endpoint-\S+__10\.244\.0\.11\/8080, 1 : goto endpoint-\S+__10\.244\.0\.12\/8080, 2 : goto endpoint-\S+__10\.244\.0\.13\/8080 \}$/);
  assert.deepEqual(chain(s, EP).slice(0, 2), ['ip saddr 10.244.0.11 jump mark-for-masquerade', 'meta l4proto tcp dnat to 10.244.0.11:8080']);
  assert.doesNotMatch(s, /10\.244\.0\.14/, 'not-ready endpoints get no chain');
  assert.match(s, /set cluster-ips \{[^}]*elements = \{ 10\.96\.0\.5 \}/);
  if (canCheck) nftCheck(s);
  else t.diagnostic('nft -c skipped');
});

test('no endpoints: reject through @no-endpoint-services and the nodeport map; nothing in the nat maps', () => {
  const s = render([service('web', '10.96.0.5', { type: 'NodePort', ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }] })], [slice('web', [])]);
  assert.match(s, /10\.96\.0\.5 \. tcp \. 80 comment "default\/web:\/tcp" : goto reject-chain/);
  assert.match(s, /tcp \. 30080 comment "default\/web:\/tcp" : goto reject-chain/);
  assert.doesNotMatch(s, /chain service-[A-Z2-7]{8}-/);
  assert.doesNotMatch(s, /: goto external-/);
});

test('NodePort with eTP=Cluster masquerades; eTP=Local short-circuits pods and the node and drops without local endpoints', (t) => {
  const np = (name: string, ip: string, nodePort: number, etp: 'Cluster' | 'Local') => service(name, ip, { type: 'NodePort', externalTrafficPolicy: etp, ports: [{ port: 80, nodePort, protocol: 'TCP' }] });
  const eps = [{ ip: '10.244.1.11', node: 'n2' }];
  const s = render([np('c', '10.96.0.5', 30080, 'Cluster'), np('l', '10.96.0.6', 30081, 'Local')], [slice('c', eps, [{ port: 80, protocol: 'TCP' }]), slice('l', eps, [{ port: 80, protocol: 'TCP' }])]);
  assert.match(s, /tcp \. 30080 : goto external-\S+-default\/c\/tcp\//);
  assert.deepEqual(chain(s, 'external-').map((r) => r.replace(/-[A-Z2-7]{8}-/g, '-H-')), ['jump mark-for-masquerade', 'goto service-H-default/c/tcp/']);
  const local = s.split('\n').findIndex((l) => l.includes('chain external-') && l.includes('/l/'));
  const localRules = s.split('\n').slice(local + 1, local + 4).map((l) => l.trim().replace(/-[A-Z2-7]{8}-/g, '-H-'));
  assert.deepEqual(localRules, [
    'ip saddr 10.244.0.0/16 goto service-H-default/l/tcp/ comment "short-circuit pod traffic"',
    'fib saddr type local jump mark-for-masquerade comment "masquerade local traffic"',
    'fib saddr type local goto service-H-default/l/tcp/ comment "short-circuit local traffic"',
  ]);
  assert.match(s, /tcp \. 30081 comment "default\/l:\/tcp" : drop/);
  if (canCheck) nftCheck(s);
  else t.diagnostic('nft -c skipped');
});

test('iTP=Local without a local endpoint drops ClusterIP traffic instead of sending it elsewhere', () => {
  const s = render([service('web', '10.96.0.5', { internalTrafficPolicy: 'Local' })], [slice('web', [{ ip: '10.244.1.11', node: 'n2' }])]);
  assert.match(s, /10\.96\.0\.5 \. tcp \. 80 comment "default\/web:\/tcp" : drop/);
  assert.doesNotMatch(s, /chain endpoint-/);
});

test('ClientIP affinity: a set per endpoint with the timeout, checked before numgen, updated in the endpoint chain; live entries carried over', (t) => {
  const svc = service('web', '10.96.0.5', { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } });
  const eps = slice('web', [{ ip: '10.244.0.11' }, { ip: '10.244.0.12' }]);
  const first = render([svc], [eps]);
  const setName = /set (affinity-\S+__10\.244\.0\.11\/8080) \{/.exec(first)![1]!;
  assert.match(first, new RegExp(`set ${setName.replace(/[./]/g, '\\$&')} \\{\\n\\t\\ttype ipv4_addr\\n\\t\\tflags dynamic,timeout\\n\\t\\ttimeout 600s\\n\\t\\}`));
  const svcChain = chain(first, SVC);
  assert.match(svcChain[1]!, /^ip saddr @affinity-\S+__10\.244\.0\.11\/8080 goto endpoint-\S+__10\.244\.0\.11\/8080$/);
  assert.match(svcChain[3]!, /^numgen random mod 2/);
  assert.match(chain(first, EP)[1]!, /^update @affinity-\S+ \{ ip saddr \}$/);
  const carried = render([svc], [eps], {}, new Map([[setName, [{ ip: '10.244.5.5', expiresS: 540 }, { ip: '10.244.5.6', expiresS: 9999 }]]]));
  assert.match(carried, /elements = \{ 10\.244\.5\.5 expires 540s \}/, 'entries past the timeout are not carried');
  if (canCheck) nftCheck(carried);
  else t.diagnostic('nft -c skipped');
});

test('nodePortAddresses: an explicit address set instead of every local address; localhost NodePorts can be turned off', () => {
  const s = render([], [], { nodePortIPs: ['192.168.1.5'], localhostNodePorts: false });
  assert.deepEqual(chain(s, 'services'), ['ip daddr . meta l4proto . th dport vmap @service-ips', 'ip daddr { 192.168.1.5 } meta l4proto . th dport vmap @service-nodeports']);
  assert.deepEqual(chain(render([], [], { nodePortIPs: [] }), 'nodeport-endpoints-check'), ['ip daddr 127.0.0.1 meta l4proto . th dport vmap @no-endpoint-nodeports']);
});

test('UDP and SCTP ports dnat with their protocol; the same input renders the same bytes', (t) => {
  const svc = service('dns', '10.96.0.10', { ports: [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 's', port: 9, protocol: 'SCTP' }] });
  const sl = slice('dns', [{ ip: '10.244.0.20' }], [{ name: 'dns', port: 5353, protocol: 'UDP' }, { name: 's', port: 9, protocol: 'SCTP' }]);
  const s = render([svc], [sl]);
  assert.match(s, /meta l4proto udp dnat to 10\.244\.0\.20:5353/);
  assert.match(s, /meta l4proto sctp dnat to 10\.244\.0\.20:9/);
  assert.equal(render([svc], [sl]), s);
  assert.equal(renderDelete(), 'table ip nodelet-proxy\ndelete table ip nodelet-proxy\n');
  if (canCheck) nftCheck(s);
  else t.diagnostic('nft -c skipped');
});
