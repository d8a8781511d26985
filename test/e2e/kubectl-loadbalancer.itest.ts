// `kubectl expose --type LoadBalancer` against a server running the servicelb controller with a
// pool: the Service gets an EXTERNAL-IP from the pool, a healthCheckNodePort under eTP Local, and
// `--load-balancer-ip` is refused with the 422 kubectl prints. (That the address answers from the
// node is agent/test/integration/proxy-loadbalancer.itest.ts.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pollUntil } from '@nodelet/base';
import { NAMESPACE_SETUP_CONTROLLERS } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

describe('LoadBalancer Services with kubectl', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  before(async () => {
    env = await startKubectlEnv({ controllers: [...NAMESPACE_SETUP_CONTROLLERS, 'servicelb'], serviceLbPool: '192.0.2.240/29' });
    k = await env.newKubectl();
    assert.equal((await k(['create', 'ns', 'lb'])).code, 0);
    assert.equal((await k(['-n', 'lb', 'create', 'deployment', 'web', '--image=busybox:1.36'])).code, 0);
  });
  after(() => env?.close());

  it('kubectl expose --type LoadBalancer gets an EXTERNAL-IP from the pool', async () => {
    const r = await k(['-n', 'lb', 'expose', 'deployment', 'web', '--type', 'LoadBalancer', '--port', '80']);
    assert.equal(r.code, 0, r.stderr);
    const row = await pollUntil('an EXTERNAL-IP', async () => {
      const out = (await k(['-n', 'lb', 'get', 'svc', 'web', '--no-headers'])).stdout;
      return /^web\s+LoadBalancer\s+\S+\s+192\.0\.2\.241\s+80:3\d{4}\/TCP\s+\S+$/m.test(out) ? out : undefined;
    }, { timeoutMs: 15_000, intervalMs: 100 });
    assert.ok(row);
  });

  it('eTP Local gets a healthCheckNodePort; --load-balancer-ip is refused', async () => {
    const r = await k(['-n', 'lb', 'expose', 'deployment', 'web', '--name', 'local', '--type', 'LoadBalancer', '--port', '80', '--overrides', '{"spec":{"externalTrafficPolicy":"Local"}}']);
    assert.equal(r.code, 0, r.stderr);
    const hc = await k(['-n', 'lb', 'get', 'svc', 'local', '-o', 'jsonpath={.spec.healthCheckNodePort}']);
    assert.match(hc.stdout, /^3\d{4}$/);
    const bad = await k(['-n', 'lb', 'expose', 'deployment', 'web', '--name', 'fixed', '--type', 'LoadBalancer', '--port', '80', '--load-balancer-ip', '192.0.2.242']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /spec\.loadBalancerIP: Forbidden: requesting a load balancer address is not supported/);
  });
});
