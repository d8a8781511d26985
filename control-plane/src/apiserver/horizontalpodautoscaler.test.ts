// autoscaling/v2 HorizontalPodAutoscalers against the real API machinery: defaults, validation
// with upstream's messages, the status subresource and kubectl's Table columns; autoscaling/v1
// list and watch over the same storage.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApiServer, type TestApiServer } from './testing/test-server.js';

describe('HorizontalPodAutoscaler (autoscaling/v2)', () => {
  let srv: TestApiServer;
  const HPA = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
  const hpa = (name: string, spec: Record<string, unknown> = {}) => ({
    metadata: { name },
    spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, ...spec },
  });

  before(async () => {
    srv = await startTestApiServer();
  });
  after(() => srv?.close());

  it('defaults minReplicas, the 80% CPU metric and a given behavior’s unset parts; status starts empty', async () => {
    const created = await srv.call('POST', HPA, { ...hpa('a'), status: { desiredReplicas: 7 } });
    assert.equal(created.status, 201, JSON.stringify(created.json));
    assert.equal(created.json.spec.minReplicas, 1);
    assert.deepEqual(created.json.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }]);
    assert.equal(created.json.spec.behavior, undefined);
    assert.deepEqual(created.json.status, { desiredReplicas: 0 });
    const withBehavior = await srv.call('POST', HPA, hpa('b', { behavior: { scaleDown: { stabilizationWindowSeconds: 10 } } }));
    assert.equal(withBehavior.status, 201, JSON.stringify(withBehavior.json));
    assert.deepEqual(withBehavior.json.spec.behavior, {
      scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }, { type: 'Percent', value: 100, periodSeconds: 15 }] },
      scaleDown: { stabilizationWindowSeconds: 10, selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
  });

  it('refuses bad specs with upstream’s fields and messages', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ minReplicas: 0 }, 'spec.minReplicas', /must be greater than 0/],
      [{ minReplicas: 4, maxReplicas: 3 }, 'spec.maxReplicas', /must be greater than or equal to `minReplicas`/],
      [{ maxReplicas: 0 }, 'spec.maxReplicas', /must be greater than 0/],
      [{ scaleTargetRef: { kind: 'Deployment', name: '' } }, 'spec.scaleTargetRef.name', /Required value/],
      [{ metrics: [{ type: 'Resource' }] }, 'spec.metrics[0].resource', /must populate information for the given metric source/],
      [{ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization' } } }] }, 'spec.metrics[0].resource.target.averageUtilization', /must set either a target raw value or a target utilization/],
      [{ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 0 } } }] }, 'spec.metrics[0].resource.target.averageUtilization', /must be greater than 0/],
      [{ metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Percent', averageUtilization: 5 } } }] }, 'spec.metrics[0].resource.target.type', /must be either Utilization, Value, or AverageValue/],
      [{ behavior: { scaleUp: { stabilizationWindowSeconds: 3601 } } }, 'spec.behavior.scaleUp.stabilizationWindowSeconds', /must be less than or equal to 3600/],
      [{ behavior: { scaleDown: { policies: [{ type: 'Pods', value: 1, periodSeconds: 1801 }] } } }, 'spec.behavior.scaleDown.policies[0].periodSeconds', /must be less than or equal to 1800/],
      [{ behavior: { scaleDown: { selectPolicy: 'Avg' } } }, 'spec.behavior.scaleDown.selectPolicy', /Unsupported value: "Avg"/],
    ];
    for (const [spec, field, message] of cases) {
      const r = await srv.call('POST', HPA, hpa('bad', spec));
      assert.equal(r.status, 422, `${field}: ${JSON.stringify(r.json)}`);
      const cause = r.json.details.causes.find((c: { field: string }) => c.field === field);
      assert.ok(cause, `${field} among ${JSON.stringify(r.json.details.causes)}`);
      assert.match(cause.message, message);
    }
  });

  it('keeps status out of spec writes, takes it through /status, and prints kubectl’s columns', async () => {
    const created = await srv.call('POST', HPA, hpa('t', { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } }] }));
    assert.equal(created.status, 201);
    const status = { currentReplicas: 2, desiredReplicas: 2, currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: 40, averageValue: '40m' } } }] };
    const put = await srv.call('PUT', `${HPA}/t/status`, { ...created.json, status });
    assert.equal(put.status, 200, JSON.stringify(put.json));
    assert.deepEqual(put.json.status, status);
    const spec = await srv.call('PUT', `${HPA}/t`, { ...put.json, status: { desiredReplicas: 9 } });
    assert.equal(spec.json.status.desiredReplicas, 2);
    const negative = await srv.call('PUT', `${HPA}/t/status`, { ...put.json, status: { desiredReplicas: -1 } });
    assert.equal(negative.status, 422);
    const table = await srv.call('GET', `${HPA}/t`, undefined, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.deepEqual(table.json.columnDefinitions.map((c: { name: string }) => c.name), ['Name', 'Reference', 'Targets', 'MinPods', 'MaxPods', 'Replicas', 'Age']);
    assert.deepEqual(table.json.rows[0].cells.slice(0, 6), ['t', 'Deployment/web', 'cpu: 40%/50%', '1', 3, 2]);
    const fresh = await srv.call('GET', `${HPA}/a`, undefined, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } });
    assert.equal(fresh.json.rows[0].cells[2], 'cpu: <unknown>/80%');
  });

  it('autoscaling/v1 lists and watches the v2 storage: a v2 create arrives in the v1 watch in v1 form', async () => {
    const V1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
    const list = await srv.call('GET', V1);
    assert.equal(list.status, 200, JSON.stringify(list.json));
    assert.equal(list.json.kind, 'HorizontalPodAutoscalerList');
    assert.ok(list.json.items.length > 0 && list.json.items.every((i: { apiVersion: string }) => i.apiVersion === 'autoscaling/v1'));
    const ac = new AbortController();
    const watch = await fetch(`${srv.url}${V1}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`, { headers: { Authorization: `Bearer ${srv.token}` }, signal: ac.signal });
    const reader = watch.body!.getReader();
    const made = await srv.call('POST', HPA, hpa('seen-by-v1', { metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } }] }));
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const event = JSON.parse(new TextDecoder().decode((await reader.read()).value).split('\n')[0]!);
    ac.abort();
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object.apiVersion, 'autoscaling/v1');
    assert.equal(event.object.metadata.name, 'seen-by-v1');
    assert.equal(event.object.spec.targetCPUUtilizationPercentage, 65);
  });
});
