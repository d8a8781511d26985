import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { Service } from '@nodelet/api';
import { buildModel } from './model.js';
import { renderTable, type RenderOptions } from './render.js';
import { firewallChainName } from './render-external.js';
import { service, slice } from './testing/fixtures.js';

const opts: RenderOptions = { nodeName: 'n1', serviceCIDR: '10.96.0.0/16', clusterCIDR: '10.244.0.0/16', localhostNodePorts: false };
const lb = (name: string, ip: string, spec: Partial<NonNullable<Service['spec']>> = {}, ingress = ['192.168.240.1']): Service => ({
  ...service(name, ip, { type: 'LoadBalancer', ports: [{ port: 80, targetPort: 8080, protocol: 'TCP', nodePort: 30080 }], externalTrafficPolicy: 'Cluster', ...spec }),
  status: { loadBalancer: { ingress: ingress.map((i) => ({ ip: i, ipMode: 'VIP' as const })) } },
});
function render(services: Service[], slices: Parameters<typeof buildModel>[0]['slices']): string {
  return renderTable(buildModel({ services, slices, nodeName: 'n1', sctp: true }), opts).script;
}
/** The lines of a map's elements block (one element per line). */
function elementsOf(script: string, map: string): string[] {
  const lines = script.split('\n').map((l) => l.trim());
  const at = lines.findIndex((l) => l === `map ${map} {` || l === `set ${map} {`);
  const out: string[] = [];
  for (let i = at + 1; lines[i] !== '}'; i++) if (/^(elements = \{ )?\d/.test(lines[i]!)) out.push(lines[i]!.replace(/^elements = \{ /, '').replace(/ \}$/, '').replace(/,$/, ''));
  return out;
}
/** The rules of the first chain whose name starts with `prefix` (quoted or not). */
function chain(script: string, prefix: string): string[] {
  const lines = script.split('\n').map((l) => l.trim());
  const start = lines.findIndex((l) => l.startsWith(`chain ${prefix}`) || l.startsWith(`chain "${prefix}`));
  assert.ok(start >= 0, `no chain ${prefix}`);
  const out: string[] = [];
  for (let i = start + 1; lines[i] !== '}'; i++) out.push(lines[i]!);
  return out;
}
const canCheck = process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0;

test('a LoadBalancer IP and an externalIP lead to the external chain (masquerade under eTP Cluster)', () => {
  const s = render([lb('web', '10.96.0.5', { externalIPs: ['203.0.113.9'] })], [slice('web', [{ ip: '10.244.0.11', node: 'n2' }])]);
  const ips = elementsOf(s, 'service-ips');
  assert.equal(ips.length, 3, ips.join('\n'));
  assert.match(ips.find((e) => e.startsWith('192.168.240.1 . tcp . 80'))!, /: goto "?external-[A-Z2-7]{8}-default\/web\/tcp\//);
  assert.match(ips.find((e) => e.startsWith('203.0.113.9 . tcp . 80'))!, /: goto "?external-/);
  assert.deepEqual(chain(s, 'external-')[0], 'jump mark-for-masquerade');
  assert.deepEqual(elementsOf(s, 'firewall-ips'), []);
  if (canCheck) assert.equal(spawnSync('nft', ['-c', '-f', '-'], { input: s, encoding: 'utf8' }).status, 0);
});

test('eTP Local: external traffic goes to local endpoints only, unmasqueraded; with none here it is dropped; with none anywhere rejected', () => {
  const local = render([lb('web', '10.96.0.5', { externalTrafficPolicy: 'Local' })], [slice('web', [{ ip: '10.244.0.11', node: 'n1' }, { ip: '10.244.1.11', node: 'n2' }])]);
  const ext = chain(local, 'external-');
  assert.ok(!ext.includes('jump mark-for-masquerade'), ext.join('\n'));
  assert.match(ext.at(-1)!, /^goto "?local-/);
  const loc = chain(local, 'local-');
  assert.match(loc[0]!, /numgen random mod 1 /, 'only the local endpoint');
  const elsewhere = render([lb('web', '10.96.0.5', { externalTrafficPolicy: 'Local' })], [slice('web', [{ ip: '10.244.1.11', node: 'n2' }])]);
  assert.ok(elementsOf(elsewhere, 'no-endpoint-services').some((e) => /^192\.168\.240\.1 \. tcp \. 80 .*: drop$/.test(e)), elementsOf(elsewhere, 'no-endpoint-services').join('\n'));
  const none = render([lb('web', '10.96.0.5')], []);
  assert.ok(elementsOf(none, 'no-endpoint-services').some((e) => /^192\.168\.240\.1 \. tcp \. 80 .*: goto reject-chain$/.test(e)));
  assert.ok(!elementsOf(none, 'service-ips').some((e) => e.startsWith('192.168.240.1')));
});

test('loadBalancerSourceRanges: a firewall chain before DNAT for the LB IPs only, not for externalIPs', () => {
  const svc = lb('web', '10.96.0.5', { externalIPs: ['203.0.113.9'], loadBalancerSourceRanges: ['192.168.77.0/24', ' 10.1.0.0/16'] });
  const s = render([svc], [slice('web', [{ ip: '10.244.0.11', node: 'n1' }])]);
  const fwChain = firewallChainName(buildModel({ services: [svc], slices: [], nodeName: 'n1', sctp: true })[0]!);
  const fw = elementsOf(s, 'firewall-ips');
  assert.equal(fw.length, 1);
  assert.match(fw[0]!, /^192\.168\.240\.1 \. tcp \. 80 comment "default\/web:\/tcp" : goto "?firewall-[A-Z2-7]{8}-default\/web\/tcp\//);
  assert.deepEqual(chain(s, fwChain), ['ip saddr != { 10.1.0.0/16, 192.168.77.0/24 } drop']);
  assert.deepEqual(chain(s, 'firewall-check'), ['ip daddr . meta l4proto . th dport vmap @firewall-ips']);
  assert.deepEqual(chain(s, 'filter-prerouting-pre-dnat'), ['type filter hook prerouting priority -110; policy accept;', 'ct state new jump firewall-check']);
  if (canCheck) assert.equal(spawnSync('nft', ['-c', '-f', '-'], { input: s, encoding: 'utf8' }).status, 0);
});

test('a LoadBalancer of another type or without an address adds nothing; bad addresses are skipped', () => {
  const s = render([lb('web', '10.96.0.5', { type: 'NodePort' }), lb('x', '10.96.0.6', {}, ['not-an-ip', 'fe80::1'])], [slice('web', [{ ip: '10.244.0.11' }]), slice('x', [{ ip: '10.244.0.12' }])]);
  assert.deepEqual(elementsOf(s, 'service-ips').map((e) => e.split(' ')[0]), ['10.96.0.5', '10.96.0.6']);
});
