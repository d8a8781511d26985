// The real kubectl against the server's autoscaling/v2 HorizontalPodAutoscalers (kubectl sends
// protobuf): `kubectl create -f`, `kubectl get hpa` with kubectl's columns and the TARGETS cell,
// `kubectl apply` with a behavior defaulted, and a refused spec with upstream's message;
// `kubectl autoscale` (autoscaling/v1) over the same storage, and a v1 read-modify-write that keeps
// a v2-only behavior.
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

  it('kubectl autoscale posts autoscaling/v1; the HPA reads as v2 with the Utilization 50 metric and shows in kubectl get hpa', async () => {
    assert.equal((await k(['create', 'deployment', 'web', '--image=busybox:1.36'])).code, 0);
    const made = await k(['autoscale', 'deployment', 'web', '--cpu-percent=50', '--min=1', '--max=3']);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^horizontalpodautoscaler.autoscaling\/web autoscaled$/m);
    const v2 = await k(['get', 'horizontalpodautoscalers.v2.autoscaling', 'web', '-o', 'json']);
    assert.equal(v2.code, 0, v2.stderr);
    const obj = JSON.parse(v2.stdout) as { apiVersion: string; spec: { minReplicas: number; maxReplicas: number; metrics: unknown[] } };
    assert.equal(obj.apiVersion, 'autoscaling/v2');
    assert.deepEqual(obj.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }]);
    assert.deepEqual([obj.spec.minReplicas, obj.spec.maxReplicas], [1, 3]);
    const v1 = await k(['get', 'horizontalpodautoscalers.v1.autoscaling', 'web', '-o', 'jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage}']);
    assert.equal(v1.stdout, 'autoscaling/v1 50');
    const table = await k(['get', 'hpa', 'web']);
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^web\s+Deployment\/web\s+cpu: <unknown>\/50%\s+1\s+3\s+0\s+\S+$/m);
    const versions = await k(['api-versions']);
    assert.match(versions.stdout, /^autoscaling\/v1$/m);
    assert.match(versions.stdout, /^autoscaling\/v2$/m);
    const group = JSON.parse((await k(['get', '--raw', '/apis/autoscaling'])).stdout) as { versions: { version: string }[]; preferredVersion: { version: string } };
    assert.deepEqual(group.versions.map((v) => v.version), ['v2', 'v1']);
    assert.equal(group.preferredVersion.version, 'v2');
  });

  it('a v2 HPA with behavior read and written back through autoscaling/v1 keeps its behavior', async () => {
    const made = await k(['create', '-f', '-'], { stdin: `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: rmw}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 5
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}}]
  behavior: {scaleDown: {stabilizationWindowSeconds: 120}}
` });
    assert.equal(made.code, 0, made.stderr);
    const read = await k(['get', 'horizontalpodautoscalers.v1.autoscaling', 'rmw', '-o', 'json']);
    assert.equal(read.code, 0, read.stderr);
    const v1 = JSON.parse(read.stdout) as { apiVersion: string; spec: Record<string, unknown> };
    assert.equal(v1.apiVersion, 'autoscaling/v1');
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 60);
    v1.spec.maxReplicas = 6;
    const replaced = await k(['replace', '-f', '-'], { stdin: JSON.stringify(v1) });
    assert.equal(replaced.code, 0, replaced.stderr);
    const got = await k(['get', 'horizontalpodautoscalers.v2.autoscaling', 'rmw', '-o',
      'jsonpath={.spec.maxReplicas} {.spec.behavior.scaleDown.stabilizationWindowSeconds} {.spec.metrics[0].resource.target.averageUtilization} {.metadata.annotations}']);
    assert.equal(got.stdout, '6 120 60 ');
  });
});
