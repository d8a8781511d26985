// PodSecurity admission through kubectl 1.32 against a real server configured by an
// AdmissionConfiguration file (as `nodelet server --admission-control-config-file` reads it):
// enforce refuses with upstream's message, warn and workloads print kubectl's `Warning:` lines,
// kube-system is privileged, and the configured exemptions hold.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAdmissionConfiguration } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type Kubectl, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const podYaml = (name: string, namespace: string, extra = '', container = ''): string =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec:\n${extra}  containers:\n  - name: c\n    image: busybox:1.36\n${container}`;
const PRIVILEGED = '    securityContext: {privileged: true}\n';

describe('PodSecurity admission with kubectl', { skip }, () => {
  let env: KubectlEnv;
  let k: Kubectl;
  let configDir: string;
  before(async () => {
    configDir = await mkdtemp(join(tmpdir(), 'nodelet-podsec-it-'));
    const file = join(configDir, 'admission.yaml');
    await writeFile(file, [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  configuration:',
      '    apiVersion: pod-security.admission.config.k8s.io/v1',
      '    kind: PodSecurityConfiguration',
      '    defaults: {enforce: privileged, audit: privileged, warn: privileged}',
      '    exemptions: {usernames: [exempt-user], namespaces: [exempt-ns], runtimeClasses: [kata]}',
      '',
    ].join('\n'));
    env = await startKubectlEnv({ podSecurity: await loadAdmissionConfiguration(file) });
    k = await env.newKubectl();
    for (const ns of ['strict', 'exempt-ns']) assert.equal((await k(['create', 'namespace', ns])).code, 0);
    const labelled = await k(['label', 'namespace', 'strict', 'pod-security.kubernetes.io/enforce=restricted']);
    assert.equal(labelled.code, 0, labelled.stderr);
  });
  after(async () => {
    await env?.close();
    if (configDir) await rm(configDir, { recursive: true, force: true });
  });

  it('enforce=restricted refuses a plain pod with upstream\'s message', async () => {
    const r = await k(['run', 'x', '--image=busybox:1.36', '-n', 'strict']);
    assert.notEqual(r.code, 0);
    assert.equal(
      r.stderr.trim(),
      'Error from server (Forbidden): pods "x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "x" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "x" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "x" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "x" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    assert.equal((await k(['get', 'pod', 'x', '-n', 'strict'])).code, 1, 'nothing created');
  });

  it('the default namespace warns at baseline: kubectl prints the Warning', async () => {
    const r = await k(['apply', '-f', '-'], { stdin: podYaml('priv', 'default', '', PRIVILEGED) });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^Warning: would violate PodSecurity "baseline:latest": privileged \(container "c" must not set securityContext\.privileged=true\)$/m);
  });

  it('a Deployment in an enforced namespace is created with a warning only', async () => {
    const r = await k(['create', 'deployment', 'd', '--image=busybox:1.36', '-n', 'strict']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /deployment\.apps\/d created/);
    assert.match(r.stderr, /^Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false \(container "busybox" must set securityContext\.allowPrivilegeEscalation=false\), /m);
  });

  it('kube-system stays privileged', async () => {
    const r = await k(['apply', '-f', '-'], { stdin: podYaml('sys', 'kube-system', '  hostNetwork: true\n', PRIVILEGED) });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /PodSecurity/);
  });

  it('exemptions from the configuration file: user, namespace, runtime class', async () => {
    const asUser = await k(['apply', '--as=exempt-user', '--as-group=system:masters', '-f', '-'], { stdin: podYaml('by-user', 'strict', '', PRIVILEGED) });
    assert.equal(asUser.code, 0, asUser.stderr);
    assert.equal((await k(['apply', '-f', '-'], { stdin: podYaml('by-admin', 'strict', '', PRIVILEGED) })).code, 1);
    assert.equal((await k(['apply', '-f', '-'], { stdin: 'apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata: {name: kata}\nhandler: kata\n' })).code, 0);
    const byClass = await k(['apply', '-f', '-'], { stdin: podYaml('by-class', 'strict', '  runtimeClassName: kata\n', PRIVILEGED) });
    assert.equal(byClass.code, 0, byClass.stderr);
    const label = await k(['label', 'namespace', 'exempt-ns', 'pod-security.kubernetes.io/enforce=restricted']);
    assert.equal(label.code, 0, label.stderr);
    assert.match(label.stderr, /^Warning: namespace "exempt-ns" is exempt from Pod Security, and the policy \(enforce=restricted:latest\) will be ignored$/m);
    const inNs = await k(['apply', '-f', '-'], { stdin: podYaml('in-ns', 'exempt-ns', '', PRIVILEGED) });
    assert.equal(inNs.code, 0, inNs.stderr);
  });

  it('enforcing a level on a namespace warns about the pods already there', async () => {
    const r = await k(['label', 'namespace', 'default', 'pod-security.kubernetes.io/enforce=baseline']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^Warning: existing pods in namespace "default" violate the new PodSecurity enforce level "baseline:latest"$/m);
    assert.match(r.stderr, /^Warning: priv: privileged$/m);
  });
});
