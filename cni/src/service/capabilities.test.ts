import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normaliseCapabilityArgs } from './capabilities.js';

test('go-cni capability structs (no JSON tags) become the convention camelCase', () => {
  assert.deepEqual(
    normaliseCapabilityArgs({
      portMappings: [{ HostPort: 8080, ContainerPort: 80, Protocol: 'tcp', HostIP: '' }, { hostPort: 53, containerPort: 53, protocol: 'udp', hostIP: '127.0.0.1' }],
      bandwidth: { IngressRate: 1000, EgressBurst: 5 },
      dns: { Servers: ['10.0.0.10'], Searches: ['svc'], Options: [] },
      'io.kubernetes.cri.pod-annotations': { Keep: 'As-Is' },
    }),
    {
      portMappings: [{ hostPort: 8080, containerPort: 80, protocol: 'tcp' }, { hostPort: 53, containerPort: 53, protocol: 'udp', hostIP: '127.0.0.1' }],
      bandwidth: { ingressRate: 1000, egressBurst: 5 },
      dns: { servers: ['10.0.0.10'], searches: ['svc'], options: [] },
      'io.kubernetes.cri.pod-annotations': { Keep: 'As-Is' },
    },
  );
  assert.deepEqual(normaliseCapabilityArgs(undefined), {});
});
