import { test } from 'node:test';
import assert from 'node:assert/strict';
import { netnsPathFromSandboxInfo } from './netns.js';

const info = (doc: object) => ({ info: { info: JSON.stringify(doc) } });

test('containerd 1.6: the network namespace path of the runtime spec', () => {
  const doc = { pid: 12, runtimeSpec: { linux: { namespaces: [{ type: 'pid' }, { type: 'network', path: '/var/run/netns/cni-1234' }] } } };
  assert.equal(netnsPathFromSandboxInfo(info(doc)), '/var/run/netns/cni-1234');
  assert.equal(netnsPathFromSandboxInfo(info(doc).info), '/var/run/netns/cni-1234', 'accepts the bare info map');
});

test('containerd 2.x: sandboxMetadata.NetNSPath', () => {
  assert.equal(netnsPathFromSandboxInfo(info({ sandboxMetadata: { NetNSPath: '/run/netns/cni-9' } })), '/run/netns/cni-9');
});

test('CRI-O: runtimeSpec only (spoofed infra container), or pid fallback', () => {
  assert.equal(netnsPathFromSandboxInfo(info({ runtimeSpec: { linux: { namespaces: [{ type: 'network', path: '/var/run/netns/abc' }] } } })), '/var/run/netns/abc');
  assert.equal(netnsPathFromSandboxInfo(info({ pid: 77, runtimeSpec: { linux: { namespaces: [{ type: 'network' }] } } })), '/proc/77/ns/net');
  assert.equal(netnsPathFromSandboxInfo(info({ pid: 78 })), '/proc/78/ns/net');
});

test('host network, non-verbose status and junk give undefined', () => {
  assert.equal(netnsPathFromSandboxInfo(info({ pid: 5, runtimeSpec: { linux: { namespaces: [{ type: 'pid' }] } } })), undefined);
  assert.equal(netnsPathFromSandboxInfo({ info: {} }), undefined);
  assert.equal(netnsPathFromSandboxInfo({ info: { info: 'not json' } }), undefined);
  assert.equal(netnsPathFromSandboxInfo(undefined), undefined);
});
