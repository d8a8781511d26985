import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Pod, Service } from '@nodelet/api';
import { computeSlices, computeSubsets } from './compute.js';

const svc: Service = {
  metadata: { name: 'web', namespace: 'default' },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }, { name: 'metrics', port: 9090, targetPort: 9090 }] },
};

function pod(name: string, ip: string | undefined, ready: boolean, o: { namedPort?: boolean; labels?: Record<string, string>; deleting?: boolean } = {}): Pod {
  return {
    metadata: { name, namespace: 'default', uid: `u-${name}`, labels: o.labels ?? { app: 'web' }, deletionTimestamp: o.deleting ? '2026-01-01T00:00:00Z' : undefined },
    spec: { nodeName: 'n1', containers: [{ name: 'c', ports: o.namedPort === false ? [] : [{ name: 'http', containerPort: 8080 }] }] },
    status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  };
}

test('ready pods are addresses, not-ready ones notReadyAddresses; pods without IP or selector match are left out', () => {
  const subsets = computeSubsets(svc, [pod('b', '10.244.0.3', true), pod('a', '10.244.0.2', false), pod('c', undefined, true), pod('d', '10.244.0.9', true, { labels: { app: 'x' } })]);
  assert.deepEqual(subsets, [
    {
      addresses: [{ ip: '10.244.0.3', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'default', name: 'b', uid: 'u-b' } }],
      notReadyAddresses: [{ ip: '10.244.0.2', nodeName: 'n1', targetRef: { kind: 'Pod', namespace: 'default', name: 'a', uid: 'u-a' } }],
      ports: [
        { name: 'http', port: 8080, protocol: 'TCP' },
        { name: 'metrics', port: 9090, protocol: 'TCP' },
      ],
    },
  ]);
});

test('a pod without the named port gets its own subset with the numeric ports only; terminating pods drop out', () => {
  const subsets = computeSubsets(svc, [pod('a', '10.244.0.2', true), pod('b', '10.244.0.3', true, { namedPort: false }), pod('z', '10.244.0.4', true, { deleting: true })]);
  assert.equal(subsets.length, 2);
  assert.deepEqual(subsets.map((s) => s.ports?.map((p) => p.port)), [[8080, 9090], [9090]]);
});

test('slices carry ready/serving/terminating conditions', () => {
  const [slice] = computeSlices(svc, [pod('a', '10.244.0.2', true), pod('z', '10.244.0.4', true, { deleting: true }), pod('n', '10.244.0.5', false)]);
  assert.deepEqual(
    slice?.endpoints.map((e) => [e.addresses[0], e.conditions]),
    [
      ['10.244.0.2', { ready: true, serving: true, terminating: false }],
      ['10.244.0.4', { ready: false, serving: true, terminating: true }],
      ['10.244.0.5', { ready: false, serving: false, terminating: false }],
    ],
  );
  assert.deepEqual(computeSlices({ ...svc, spec: { ...svc.spec, selector: undefined } }, [pod('a', '10.244.0.2', true)]), []);
});

test("a pod's hostname is its endpoint's hostname only when its subdomain names the Service", () => {
  const named = (name: string, ip: string, hostname: string, subdomain?: string): Pod => {
    const p = pod(name, ip, true);
    p.spec = { ...p.spec!, hostname, subdomain };
    return p;
  };
  const pods = [named('a', '10.244.0.2', 'web-0', 'web'), named('b', '10.244.0.3', 'other', 'db'), named('c', '10.244.0.4', 'lone')];
  const [slice] = computeSlices(svc, pods);
  assert.deepEqual(slice!.endpoints.map((e) => e.hostname), ['web-0', undefined, undefined]);
  const [subset] = computeSubsets(svc, pods);
  assert.deepEqual(subset!.addresses!.map((a) => a.hostname), ['web-0', undefined, undefined]);
});
