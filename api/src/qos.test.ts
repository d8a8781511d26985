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
