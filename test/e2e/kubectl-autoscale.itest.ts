// The real kubectl against the server's autoscaling/v2 HorizontalPodAutoscalers (kubectl sends
// protobuf): `kubectl create -f`, `kubectl get hpa` with kubectl's columns and the TARGETS cell,
// `kubectl apply` with a behavior defaulted, and a refused spec with upstream's message.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

describe('kubectl and HorizontalPodAutoscalers', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv();
    k = await env.newKubectl();
  });
  after(() => env?.close());

  it('kubectl create -f of an autoscaling/v2 HPA; kubectl get hpa shows kubectl’s columns and the TARGETS cell', async () => {
    assert.equal((await k(['create', 'deployment', 'x', '--image=busybox:1.36'])).code, 0);
    const made = await k(['create', '-f', '-'], { stdin: `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: x}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: x}
  minReplicas: 1
  maxReplicas: 3
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 50}}}]
` });
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^horizontalpodautoscaler.autoscaling\/x created$/m);
    const table = await k(['get', 'hpa']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^NAME\s+REFERENCE\s+TARGETS\s+MINPODS\s+MAXPODS\s+REPLICAS\s+AGE$/m);
    assert.match(table.stdout, /^x\s+Deployment\/x\s+cpu: <unknown>\/50%\s+1\s+3\s+0\s+\S+$/m);
  });

  it('kubectl apply of an autoscaling/v2 manifest with behavior, and a refused one with upstream’s message', async () => {
    const manifest = (max: number) => `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: mem}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: x}
  maxReplicas: ${max}
  metrics: [{type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 100Mi}}}]
  behavior: {scaleDown: {stabilizationWindowSeconds: 60}}
`;
    const applied = await k(['apply', '-f', '-'], { stdin: manifest(4) });
    assert.equal(applied.code, 0, applied.stderr);
    const got = await k(['get', 'hpa', 'mem', '-o', 'jsonpath={.spec.behavior.scaleDown.stabilizationWindowSeconds} {.spec.behavior.scaleUp.policies[0].type}']);
    assert.equal(got.stdout, '60 Pods');
    const table = await k(['get', 'hpa', 'mem']);
    assert.match(table.stdout, /^mem\s+Deployment\/x\s+memory: <unknown>\/100Mi\s+1\s+4\s+0\s+\S+$/m);
    const refused = await k(['apply', '-f', '-'], { stdin: manifest(0) });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /spec\.maxReplicas: Invalid value: 0: must be greater than 0/);
  });
});
