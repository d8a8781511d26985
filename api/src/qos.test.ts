import { test } from 'node:test';
import assert from 'node:assert/strict';
import { podQOSClass } from './qos.js';

const c = (resources?: { requests?: Record<string, string>; limits?: Record<string, string> }) => ({ name: 'c', image: 'i', ...(resources ? { resources } : {}) });

test('podQOSClass: core/v1 GetPodQOS — only CPU and memory decide', () => {
  assert.equal(podQOSClass({ containers: [c()] }), 'BestEffort');
  assert.equal(podQOSClass({ containers: [c({ requests: { 'ephemeral-storage': '1Gi' } })] }), 'BestEffort');
  assert.equal(podQOSClass({ containers: [c({ requests: { cpu: '10m' } })] }), 'Burstable');
  assert.equal(podQOSClass({ containers: [c({ limits: { cpu: '1', memory: '1Gi' } })] }), 'Guaranteed', 'requests default to the limits');
  assert.equal(podQOSClass({ containers: [c({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m' } })] }), 'Burstable');
  assert.equal(podQOSClass({ containers: [c({ limits: { cpu: '1', memory: '1Gi' } })], initContainers: [c()] }), 'Burstable', 'every container counts, init ones too');
  assert.equal(podQOSClass(undefined), 'BestEffort');
});

test('podQOSClass: requests and limits are compared as amounts, not as text', () => {
  assert.equal(podQOSClass({ containers: [c({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '1000m', memory: '1024Mi' } })] }), 'Guaranteed');
  assert.equal(podQOSClass({ containers: [c({ limits: { cpu: '0.5', memory: '1073741824' }, requests: { cpu: '500m', memory: '1Gi' } })] }), 'Guaranteed');
  assert.equal(podQOSClass({ containers: [c({ limits: { cpu: '1', memory: '1G' }, requests: { cpu: '1', memory: '1Gi' } })] }), 'Burstable', '1G is not 1Gi');
});
