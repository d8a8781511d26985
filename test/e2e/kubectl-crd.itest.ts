// Custom resources with the real kubectl 1.32 and @kubernetes/client-node, on SQLite and on etcd:
// a CRD in a real project's style (namespaced, two versions with conversion None, status and scale
// subresources, printer columns, a defaulted and a pattern-validated field) is applied and
// Established; objects are defaulted, pruned and validated (422 with the field path), listed with
// the printer columns, short name and category `all`, watched by an informer, scaled through
// /scale, collected through an ownerReference, explained from OpenAPI, and deleted with their CRD.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as k8s from '@kubernetes/client-node';
import { pollUntil } from '@nodelet/base';
import { NAMESPACE_SETUP_CONTROLLERS } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';
import { widgetCrd, WIDGET_GROUP } from '../../control-plane/src/apiserver/apiextensions/testing/fixtures.js';

const skip = kubectlUnavailableReason();
const CRD_NAME = `widgets.${WIDGET_GROUP}`;

const widget = (name: string, spec: string, extra = ''): string => `apiVersion: ${WIDGET_GROUP}/v1
kind: Widget
metadata:
  name: ${name}
  namespace: default
  labels: {app: ${name}}
${extra}spec:
${spec}`;

for (const datastore of ['sqlite', 'etcd'] as const) {
  describe(`custom resources with kubectl and client-node (${datastore})`, { skip }, () => {
    let env: KubectlEnv;
    let k: Kubectl;
    before(async () => {
      env = await startKubectlEnv({ controllers: [...NAMESPACE_SETUP_CONTROLLERS, 'garbagecollector'] }, { datastore });
      k = await env.newKubectl();
    });
    after(() => env?.close());

    const ok = async (args: string[], stdin?: string): Promise<string> => {
      const r = await k(args, stdin === undefined ? {} : { stdin });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };

    it('applies the CRD and waits for Established; discovery, short name and explain see it', async () => {
      assert.match(await ok(['apply', '-f', '-'], JSON.stringify(widgetCrd())), /customresourcedefinition.apiextensions.k8s.io\/widgets.demo.nodelet.io created/);
      await ok(['wait', '--for', 'condition=established', '--timeout=30s', `crd/${CRD_NAME}`]);
      // Large CRDs are usually applied server-side (the last-applied annotation would be too big).
      assert.match(await ok(['apply', '--server-side', '-f', '-'], JSON.stringify(widgetCrd())), /serverside-applied/);
      const resources = await ok(['api-resources', '--api-group', WIDGET_GROUP]);
      assert.match(resources, /^widgets\s+wd\s+demo\.nodelet\.io\/v1\s+true\s+Widget$/m);
      const explain = await ok(['explain', 'widgets.spec']);
      assert.match(explain, /^ {2}image\t<string> -required-\n {4}The image the widget runs\.$/m);
      assert.match(explain, /^ {2}replicas\t<integer>$/m);
    });

    it('defaults, validates (422 with the field path) and prunes', async () => {
      await ok(['apply', '-f', '-'], widget('a', '  image: nginx:1.27\n'));
      assert.equal(await ok(['get', 'widget', 'a', '-o', 'jsonpath={.spec.replicas}/{.spec.mode}']), '1/safe');
      assert.match(await ok(['apply', '--server-side', '-f', '-'], widget('ssa', '  image: busybox\n  mode: fast\n')), /serverside-applied/);
      assert.equal(await ok(['get', 'widget', 'ssa', '-o', 'jsonpath={.spec.replicas}/{.spec.mode}']), '1/fast');
      await ok(['delete', 'widget', 'ssa']);
      const bad = await k(['apply', '-f', '-'], { stdin: widget('bad', '  image: Not An Image\n  replicas: 11\n') });
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /The Widget "bad" is invalid: \n\* spec\.image: Invalid value: "Not An Image": spec\.image in body should match '\^\[a-z0-9\.\/-\]\+/);
      assert.match(bad.stderr, /\* spec\.replicas: Invalid value: 11: spec\.replicas in body should be less than or equal to 10/);
      const strict = await k(['create', '-f', '-'], { stdin: widget('strict', '  image: busybox\n  bogus: 1\n') });
      assert.notEqual(strict.code, 0);
      assert.match(strict.stderr, /unknown field "spec\.bogus"/);
      await ok(['create', '--validate=false', '-f', '-'], widget('pruned', '  image: busybox\n  bogus: 1\n'));
      assert.equal(await ok(['get', 'widget', 'pruned', '-o', 'jsonpath={.spec}']), '{"image":"busybox","mode":"safe","replicas":1}');
    });

    it('lists with the printer columns, by short name, in category all, by label and field selector; reads v1beta1', async () => {
      await ok(['patch', 'widget', 'a', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running","replicas":1}}']);
      const table = await ok(['get', 'wd']);
      assert.match(table, /^NAME\s+IMAGE\s+REPLICAS\s+PHASE\s+AGE\n/);
      assert.match(table, /^a\s+nginx:1\.27\s+1\s+Running\s+\d+s$/m);
      assert.match(await ok(['get', 'all']), /^widget\.demo\.nodelet\.io\/a\s+nginx:1\.27/m);
      assert.equal(await ok(['get', 'widgets', '-l', 'app=a', '-o', 'name']), 'widget.demo.nodelet.io/a\n');
      assert.equal(await ok(['get', 'widgets', '--field-selector', 'metadata.name=pruned', '-o', 'name']), 'widget.demo.nodelet.io/pruned\n');
      assert.equal(await ok(['get', `widgets.v1beta1.${WIDGET_GROUP}`, 'a', '-o', 'jsonpath={.apiVersion}']), `${WIDGET_GROUP}/v1beta1`);
    });

    it('an informer sees adds, updates and deletes; kubectl scale goes through /scale', async () => {
      const kc = new k8s.KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'lab', server: env.cp.url, caData: Buffer.from(env.cp.caPem).toString('base64'), skipTLSVerify: false }],
        users: [{ name: 'admin', token: env.cp.adminToken }],
        contexts: [{ name: 'lab', cluster: 'lab', user: 'admin' }],
        currentContext: 'lab',
      });
      const custom = kc.makeApiClient(k8s.CustomObjectsApi);
      const path = `/apis/${WIDGET_GROUP}/v1/namespaces/default/widgets`;
      type W = k8s.KubernetesObject & { spec?: { replicas?: number } };
      const informer = k8s.makeInformer<W>(kc, path, () => custom.listNamespacedCustomObject({ group: WIDGET_GROUP, version: 'v1', namespace: 'default', plural: 'widgets' }) as never);
      const seen: string[] = [];
      informer.on('add', (w) => seen.push(`add ${w.metadata!.name}`));
      informer.on('update', (w) => seen.push(`update ${w.metadata!.name} ${w.spec?.replicas}`));
      informer.on('delete', (w) => seen.push(`delete ${w.metadata!.name}`));
      await informer.start();
      try {
        await pollUntil('initial adds', () => seen.includes('add a') && seen.includes('add pruned'), { timeoutMs: 10_000, intervalMs: 25 });
        assert.match(await ok(['scale', 'widget', 'a', '--replicas=3']), /widget.demo.nodelet.io\/a scaled/);
        await pollUntil('update a 3', () => seen.includes('update a 3'), { timeoutMs: 10_000, intervalMs: 25 });
        const scale = await env.api('GET', `${path}/a/scale`);
        assert.deepEqual(scale.json().spec, { replicas: 3 });
        await custom.createNamespacedCustomObject({ group: WIDGET_GROUP, version: 'v1', namespace: 'default', plural: 'widgets', body: { apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', metadata: { name: 'c' }, spec: { image: 'busybox' } } });
        await pollUntil('add c', () => seen.includes('add c'), { timeoutMs: 10_000, intervalMs: 25 });
        await ok(['delete', 'widget', 'c']);
        await pollUntil('delete c', () => seen.includes('delete c'), { timeoutMs: 10_000, intervalMs: 25 });
      } finally {
        await informer.stop();
      }
    });

    it('collects a config map owned by a deleted widget', async () => {
      const uid = await ok(['get', 'widget', 'pruned', '-o', 'jsonpath={.metadata.uid}']);
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'of-pruned', namespace: 'default', ownerReferences: [{ apiVersion: `${WIDGET_GROUP}/v1`, kind: 'Widget', name: 'pruned', uid }] } };
      await ok(['create', '-f', '-'], JSON.stringify(cm));
      await ok(['delete', 'widget', 'pruned']);
      await pollUntil('the owned config map is collected', async () => (await env.api('GET', '/api/v1/namespaces/default/configmaps/of-pruned')).status === 404, { timeoutMs: 20_000 });
    });

    it('deleting the CRD deletes its objects and stops serving the kind', async () => {
      assert.match(await ok(['delete', 'crd', CRD_NAME, '--timeout=60s']), /deleted/);
      assert.equal((await env.api('GET', `/apis/${WIDGET_GROUP}/v1/widgets`)).status, 404);
      // A fresh discovery cache: this kubectl's own still lists the kind (as against any server).
      const kind = await (await env.newKubectl())(['get', 'widgets']);
      assert.notEqual(kind.code, 0);
      assert.match(kind.stderr, /the server doesn't have a resource type "widgets"/);
      const left = await env.cp.store.list(`/registry/${WIDGET_GROUP}/widgets/`);
      assert.equal(left.items.length, 0);
    });
  });
}
