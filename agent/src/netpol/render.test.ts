import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import type { NetworkPolicy, Pod } from '@nodelet/api';
import { addContribution } from '../proxy/contribution.js';
import { renderPartial, renderStaleChainDeletes } from '../proxy/partial.js';
import { buildTableState, renderFull, type RenderOptions } from '../proxy/render.js';
import { EGRESS_MAP, INGRESS_MAP, buildNetpolContribution, type NetpolContribution } from './render.js';
import { namespace, pod, policy } from './testing/fixtures.js';

const namespaces = [namespace('a', { team: 'a' }), namespace('b', { team: 'b' }), namespace('c')];
const pods: Pod[] = [
  pod('server', 'a', { app: 'server' }, '10.244.0.10', 'n1', [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]),
  pod('server2', 'a', { app: 'server' }, '10.244.0.11', 'n1', [{ name: 'http', containerPort: 9090, protocol: 'TCP' }]),
  pod('client', 'a', { app: 'client' }, '10.244.1.20', 'n2'),
  pod('bclient', 'b', { app: 'client' }, '10.244.1.21', 'n2'),
  pod('bother', 'b', { app: 'other' }, '10.244.0.22', 'n1'),
  pod('remote', 'c', { app: 'server' }, '10.244.1.30', 'n2'),
];
const servers = { matchLabels: { app: 'server' } };

const build = (policies: NetworkPolicy[], p: Pod[] = pods): NetpolContribution => buildNetpolContribution({ policies, namespaces, pods: p, nodeName: 'n1', version: 1 });

/** Policy chain names without their hash (`a/deny/ingress`). */
const bare = (chain: string): string => chain.replace(/^netpol-[A-Z2-7]{8}-/, '');

interface View {
  ingress: Record<string, string[]>;
  egress: Record<string, string[]>;
  rules: Record<string, string[]>;
}

/** The contribution as a table reads: which policies isolate each local pod, and each policy's rules with its sets written out. */
function view(c: NetpolContribution): View {
  const setText = (name: string): string => `{${[...(c.sets.get(name)?.elements.keys() ?? [])].join(', ')}}`;
  const isolation = (map: string): Record<string, string[]> => {
    const out: Record<string, string[]> = {};
    for (const [ip, e] of c.sets.get(map)!.elements) {
      const combo = e.value!.replace(/^jump /, '');
      const rules = c.chains.get(combo)!;
      assert.deepEqual(rules.slice(-2), ['meta mark & 0x10000 == 0 drop', 'meta mark set meta mark & 0xfffeffff'], 'a pod no policy allows is dropped');
      out[ip] = rules.slice(0, -2).map((r) => bare(r.replace(/^jump /, '')));
    }
    return out;
  };
  const rules: Record<string, string[]> = {};
  for (const [name, rs] of c.chains) {
    if (/^netpol-(ingress|egress)-[A-Z2-7]{8}$/.test(name)) continue;
    rules[bare(name)] = rs.map((r) => r.replace(/@(netpol-\S+)/g, (_m, s: string) => setText(s)).replace(/ ?meta mark set meta mark \| 0x10000 return$/, ' ALLOW').trim());
  }
  return { ingress: isolation(INGRESS_MAP), egress: isolation(EGRESS_MAP), rules };
}

/** nft -c needs root (it talks to the kernel without changing anything). */
const canCheck = process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0;
const opts: RenderOptions = { nodeName: 'n1', serviceCIDR: '10.96.0.0/16', clusterCIDR: '10.244.0.0/16', localhostNodePorts: true, table: 'netpol-render-test' };

/** The proxy's base table with `c` in it, as one full transaction, and the partial one from no policies to `c`. */
function nftCheck(c: NetpolContribution): void {
  const empty = addContribution(buildTableState([], opts), build([]));
  const full = renderFull(addContribution(buildTableState([], opts), c), opts);
  const partial = renderPartial(empty, addContribution(buildTableState([], opts), c), opts.table).script;
  for (const [what, script] of [['full', full], ['partial', renderFull(empty, opts) + partial]] as const) {
    const r = spawnSync('nft', ['-c', '-f', '-'], { input: script, encoding: 'utf8' });
    assert.equal(r.status, 0, `nft -c rejected the ${what} transaction:\n${r.stderr}\n${script}`);
  }
}

// The shapes of upstream's NetworkPolicy e2e cases (test/e2e/network/netpol/network_policy.go).
const cases: Array<{ name: string; policies: NetworkPolicy[]; want: View }> = [
  {
    name: 'deny all ingress: every local pod of the namespace isolated, no rule allows',
    policies: [policy('deny', 'a', { podSelector: {}, policyTypes: ['Ingress'] })],
    want: { ingress: { '10.244.0.10': ['a/deny/ingress'], '10.244.0.11': ['a/deny/ingress'] }, egress: {}, rules: { 'a/deny/ingress': [] } },
  },
  {
    name: 'allow from a namespace (namespaceSelector): pods of every matching namespace',
    policies: [policy('from-b', 'a', { podSelector: servers, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'b' } } }] }] })],
    want: { ingress: { '10.244.0.10': ['a/from-b/ingress'], '10.244.0.11': ['a/from-b/ingress'] }, egress: {}, rules: { 'a/from-b/ingress': ['ip saddr {10.244.0.22, 10.244.1.21} ALLOW'] } },
  },
  {
    name: 'allow from a pod (podSelector): the policy namespace only',
    policies: [policy('from-client', 'a', { podSelector: servers, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'client' } } }] }] })],
    want: { ingress: { '10.244.0.10': ['a/from-client/ingress'], '10.244.0.11': ['a/from-client/ingress'] }, egress: {}, rules: { 'a/from-client/ingress': ['ip saddr {10.244.1.20} ALLOW'] } },
  },
  {
    name: 'both selectors in one peer are ANDed: clients of namespaces labelled team=b',
    policies: [policy('and', 'a', { podSelector: servers, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'b' } }, podSelector: { matchLabels: { app: 'client' } } }] }] })],
    want: { ingress: { '10.244.0.10': ['a/and/ingress'], '10.244.0.11': ['a/and/ingress'] }, egress: {}, rules: { 'a/and/ingress': ['ip saddr {10.244.1.21} ALLOW'] } },
  },
  {
    name: 'ports: numbered, endPort ranges, a bare protocol, and a named port resolved on each target pod',
    policies: [policy('ports', 'a', {
      podSelector: servers,
      ingress: [{ ports: [{ port: 80 }, { protocol: 'UDP', port: 5000, endPort: 5010 }, { protocol: 'SCTP' }, { port: 'http' }] }],
    })],
    want: {
      ingress: { '10.244.0.10': ['a/ports/ingress'], '10.244.0.11': ['a/ports/ingress'] },
      egress: {},
      rules: { 'a/ports/ingress': [
        'meta l4proto . th dport { tcp . 80, udp . 5000-5010 } ALLOW',
        'meta l4proto { sctp } ALLOW',
        'ip daddr . meta l4proto . th dport {10.244.0.10 . tcp . 8080, 10.244.0.11 . tcp . 9090} ALLOW',
      ] },
    },
  },
  {
    name: 'egress to an ipBlock with except, peers and ports together',
    policies: [policy('to-block', 'a', {
      podSelector: servers, policyTypes: ['Egress'],
      egress: [{ to: [{ ipBlock: { cidr: '10.244.1.0/24', except: ['10.244.1.20/32'] } }], ports: [{ port: 8080 }] }],
    })],
    want: { ingress: {}, egress: { '10.244.0.10': ['a/to-block/egress'], '10.244.0.11': ['a/to-block/egress'] }, rules: { 'a/to-block/egress': ['ip daddr 10.244.1.0/24 ip daddr != { 10.244.1.20/32 } meta l4proto . th dport { tcp . 8080 } ALLOW'] } },
  },
  {
    // The data path is IPv4 only: an IPv6 block (valid in the API, as upstream) can match no packet,
    // so it allows nothing, and it must not reach the ip-family table (nft would refuse the whole sync).
    name: 'an IPv6 ipBlock matches nothing: a rule with only IPv6 peers allows nothing, beside an IPv4 peer only that one',
    policies: [policy('v6', 'a', {
      podSelector: servers, policyTypes: ['Egress'],
      egress: [{ to: [{ ipBlock: { cidr: 'fd00::/64' } }] }, { to: [{ ipBlock: { cidr: '2001:db8::/32', except: ['2001:db8::/48'] } }, { ipBlock: { cidr: '10.244.1.0/24' } }] }],
    })],
    want: { ingress: {}, egress: { '10.244.0.10': ['a/v6/egress'], '10.244.0.11': ['a/v6/egress'] }, rules: { 'a/v6/egress': ['ip daddr 10.244.1.0/24 ALLOW'] } },
  },
  {
    name: 'two policies selecting one pod combine as a union (either may allow)',
    policies: [
      policy('p1', 'a', { podSelector: { matchLabels: { app: 'server' } }, ingress: [{ from: [{ podSelector: { matchLabels: { app: 'client' } } }] }] }),
      policy('p2', 'a', { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'b' } } }], ports: [{ port: 443 }] }] }),
    ],
    want: {
      ingress: { '10.244.0.10': ['a/p1/ingress', 'a/p2/ingress'], '10.244.0.11': ['a/p1/ingress', 'a/p2/ingress'] },
      egress: {},
      rules: { 'a/p1/ingress': ['ip saddr {10.244.1.20} ALLOW'], 'a/p2/ingress': ['ip saddr {10.244.0.22, 10.244.1.21} meta l4proto . th dport { tcp . 443 } ALLOW'] },
    },
  },
  {
    name: 'policyTypes Egress only: ingress stays open; an egress rule with no peers allows any destination on its named port',
    policies: [policy('egress-only', 'b', { podSelector: {}, policyTypes: ['Egress'], egress: [{ ports: [{ port: 'http' }] }] })],
    want: { ingress: {}, egress: { '10.244.0.22': ['b/egress-only/egress'] }, rules: { 'b/egress-only/egress': ['ip daddr . meta l4proto . th dport {10.244.0.10 . tcp . 8080, 10.244.0.11 . tcp . 9090} ALLOW'] } },
  },
  {
    name: 'no policyTypes: Ingress, plus Egress because egress rules are given; an empty rule allows everything',
    policies: [policy('defaulted', 'b', { podSelector: { matchLabels: { app: 'other' } }, ingress: [{}], egress: [{ to: [{ podSelector: {} }] }] })],
    want: { ingress: { '10.244.0.22': ['b/defaulted/ingress'] }, egress: { '10.244.0.22': ['b/defaulted/egress'] }, rules: { 'b/defaulted/ingress': ['ALLOW'], 'b/defaulted/egress': ['ip daddr {10.244.0.22, 10.244.1.21} ALLOW'] } },
  },
];

for (const c of cases) {
  test(`netpol: ${c.name}`, (t) => {
    const got = build(c.policies);
    assert.deepEqual(view(got), c.want);
    if (canCheck) nftCheck(got);
    else t.diagnostic('nft -c skipped (needs root and nft)');
  });
}

test('netpol: the hooked chain passes replies and dispatches through the two isolation maps', () => {
  const c = build([]);
  assert.deepEqual(c.base, [['netpol-forward', ['type filter hook forward priority 0; policy accept;', 'ct state established,related accept', 'ip saddr vmap @netpol-egress-pods', 'ip daddr vmap @netpol-ingress-pods']]]);
  assert.deepEqual(view(c), { ingress: {}, egress: {}, rules: {} });
  assert.deepEqual([...c.localIPs].sort(), ['10.244.0.10', '10.244.0.11', '10.244.0.22']);
});

test('netpol: host-network, finished and IP-less pods are neither targets nor peers; remote pods are never isolated here', () => {
  const hostNet = pod('hostnet', 'a', { app: 'server' }, '192.168.1.5');
  hostNet.spec!.hostNetwork = true;
  const done = pod('done', 'a', { app: 'client' }, '10.244.0.40');
  done.status!.phase = 'Succeeded';
  const pending = pod('pending', 'a', { app: 'server' }, '');
  pending.status = { phase: 'Pending' };
  const c = build([policy('p', 'a', { podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] })], [...pods, hostNet, done, pending]);
  assert.deepEqual(view(c).ingress, { '10.244.0.10': ['a/p/ingress'], '10.244.0.11': ['a/p/ingress'] });
  assert.deepEqual(view(c).rules, { 'a/p/ingress': ['ip saddr {10.244.0.10, 10.244.0.11, 10.244.1.20} ALLOW'] });
});

test('netpol: pods sharing the same policies share one dispatch chain, so rules grow with policies, not pods', () => {
  const many = Array.from({ length: 50 }, (_, i) => pod(`s${i}`, 'a', { app: 'server' }, `10.244.0.${100 + i}`));
  const c = build([policy('deny', 'a', { podSelector: {} })], many);
  assert.equal(c.sets.get(INGRESS_MAP)!.elements.size, 50);
  assert.equal([...c.chains.keys()].length, 2, 'one policy chain and one dispatch chain');
});

test('netpol in a netns: policies added, changed and removed by partial transactions end equal to a full write of each state', { skip: canCheck ? false : 'needs root and nft' }, (t) => {
  const ns = `npt-${process.pid}`;
  const sh = (args: string[], input?: string) => spawnSync('ip', ['netns', 'exec', ns, ...args], { input, encoding: 'utf8' });
  assert.equal(spawnSync('ip', ['netns', 'add', ns]).status, 0);
  t.after(() => spawnSync('ip', ['netns', 'del', ns]));
  const apply = (script: string): void => {
    const r = sh(['nft', '-f', '-'], script);
    assert.equal(r.status, 0, `nft -f failed:\n${script}\n${r.stderr}`);
  };
  const listed = (): string[] => sh(['nft', 'list', 'table', 'ip', opts.table!]).stdout.split('\n').map((l) => l.trim()).filter(Boolean).sort();
  const state = (policies: NetworkPolicy[], p: Pod[] = pods) => addContribution(buildTableState([], opts), build(policies, p));
  const deny = policy('deny', 'a', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
  const allow = policy('allow', 'a', { podSelector: servers, ingress: [{ from: [{ namespaceSelector: {} }], ports: [{ port: 'http' }] }] });
  const moved = pods.map((p) => (p.metadata.name === 'server2' ? { ...p, metadata: { ...p.metadata, labels: { app: 'gone' } } } : p));
  const steps = [state([]), state([deny, allow]), state([deny, allow], moved), state([allow]), state([])];
  apply(renderFull(steps[0]!, opts));
  for (let i = 1; i < steps.length; i++) {
    const tx = renderPartial(steps[i - 1]!, steps[i]!, opts.table);
    apply(tx.script);
    if (tx.staleChains.length) apply(renderStaleChainDeletes(tx.staleChains, opts.table));
    const live = listed();
    apply(renderFull(steps[i]!, opts));
    assert.deepEqual(live, listed(), `after step ${i} the table equals a full write of the same state`);
  }
});
