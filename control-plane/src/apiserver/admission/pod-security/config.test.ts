// Namespace labels → policy (upstream PolicyToEvaluate) and the admission configuration file.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadAdmissionConfiguration, podSecurityConfigFrom } from './config.js';
import { DEFAULT_POLICY, formatLevelVersion, policyFromLabels, type Policy } from './policy.js';

const P = 'pod-security.kubernetes.io/';
const text = (p: Policy): string => `enforce=${formatLevelVersion(p.enforce)} audit=${formatLevelVersion(p.audit)} warn=${formatLevelVersion(p.warn)}`;

describe('policyFromLabels', () => {
  it('labels override the defaults; versions are latest or v1.x', () => {
    const { policy, errors } = policyFromLabels({ [`${P}enforce`]: 'baseline', [`${P}enforce-version`]: 'v1.29', [`${P}audit`]: 'restricted' }, DEFAULT_POLICY);
    assert.deepEqual(errors, []);
    // warn follows the stricter enforce level and its version when not labelled.
    assert.equal(text(policy), 'enforce=baseline:v1.29 audit=restricted:latest warn=baseline:v1.29');
    assert.equal(text(policyFromLabels({}, DEFAULT_POLICY).policy), 'enforce=privileged:latest audit=privileged:latest warn=privileged:latest');
  });

  it('a labelled warn level stays; a labelled warn version is kept when warn follows enforce', () => {
    assert.equal(text(policyFromLabels({ [`${P}enforce`]: 'restricted', [`${P}warn`]: 'baseline' }, DEFAULT_POLICY).policy), 'enforce=restricted:latest audit=privileged:latest warn=baseline:latest');
    assert.equal(text(policyFromLabels({ [`${P}enforce`]: 'restricted', [`${P}warn-version`]: 'v1.25' }, DEFAULT_POLICY).policy), 'enforce=restricted:latest audit=privileged:latest warn=restricted:v1.25');
  });

  it('bad values: enforce fails closed, audit and warn open, versions read as latest', () => {
    const { policy, errors } = policyFromLabels({ [`${P}enforce`]: 'strict', [`${P}audit`]: 'loud', [`${P}warn-version`]: 'v2.0' }, DEFAULT_POLICY);
    assert.equal(text(policy), 'enforce=restricted:latest audit=privileged:latest warn=privileged:latest');
    assert.deepEqual(errors.map((e) => [e.label, e.message]), [
      [`${P}enforce`, 'must be one of privileged, baseline, restricted'],
      [`${P}audit`, 'must be one of privileged, baseline, restricted'],
      [`${P}warn-version`, 'must be "latest" or "v1.x"'],
    ]);
    assert.equal(policyFromLabels({ [`${P}enforce-version`]: 'v1.01' }, DEFAULT_POLICY).errors.length, 1);
  });
});

describe('PodSecurityConfiguration', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nodelet-podsec-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('defaults every level to privileged and every version to latest', () => {
    const cfg = podSecurityConfigFrom({ apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline', 'warn-version': 'v1.30' } });
    assert.equal(text(cfg.defaults), 'enforce=baseline:latest audit=privileged:latest warn=privileged:v1.30');
    assert.equal(cfg.exemptions.namespaces.size, 0);
  });

  it('refuses bad levels, versions, exemptions and unknown fields', () => {
    const of = (o: object): unknown => ({ apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', ...o });
    assert.throws(() => podSecurityConfigFrom(of({ defaults: { enforce: 'strict' } })), /defaults\.enforce: Invalid value: "strict": must be one of privileged, baseline, restricted/);
    assert.throws(() => podSecurityConfigFrom(of({ defaults: { 'audit-version': '1.30' } })), /defaults\.audit-version: Invalid value: "1\.30": must be "latest" or "v1\.x"/);
    assert.throws(() => podSecurityConfigFrom(of({ exemptions: { namespaces: ['Bad_NS'] } })), /exemptions\.namespaces\[0\]: Invalid value: "Bad_NS"/);
    assert.throws(() => podSecurityConfigFrom(of({ exemptions: { usernames: ['a', 'a'] } })), /exemptions\.usernames\[1\]: Duplicate value: "a"/);
    assert.throws(() => podSecurityConfigFrom(of({ exemptions: { users: ['a'] } })), /exemptions: unknown field "users"/);
    assert.throws(() => podSecurityConfigFrom({ apiVersion: 'v1', kind: 'ConfigMap' }), /must be kind PodSecurityConfiguration/);
  });

  it('reads an AdmissionConfiguration file: inline, by path, and refuses other plugins', async () => {
    const inline = join(dir, 'inline.yaml');
    await writeFile(inline, [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  configuration:',
      '    apiVersion: pod-security.admission.config.k8s.io/v1',
      '    kind: PodSecurityConfiguration',
      '    defaults: {enforce: restricted, audit: restricted, warn: restricted}',
      '    exemptions: {usernames: [system:serviceaccount:kube-system:x], namespaces: [kube-system], runtimeClasses: [kata]}',
      '',
    ].join('\n'));
    const cfg = (await loadAdmissionConfiguration(inline))!;
    assert.equal(text(cfg.defaults), 'enforce=restricted:latest audit=restricted:latest warn=restricted:latest');
    assert.deepEqual([...cfg.exemptions.usernames, ...cfg.exemptions.namespaces, ...cfg.exemptions.runtimeClasses], ['system:serviceaccount:kube-system:x', 'kube-system', 'kata']);

    await writeFile(join(dir, 'psc.json'), JSON.stringify({ apiVersion: 'pod-security.admission.config.k8s.io/v1beta1', kind: 'PodSecurityConfiguration', defaults: { warn: 'baseline' } }));
    const byPath = join(dir, 'by-path.yaml');
    await writeFile(byPath, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psc.json\n');
    assert.equal(text((await loadAdmissionConfiguration(byPath))!.defaults), 'enforce=privileged:latest audit=privileged:latest warn=baseline:latest');

    const other = join(dir, 'other.yaml');
    await writeFile(other, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  path: erl.yaml\n');
    await assert.rejects(loadAdmissionConfiguration(other), /no configurable admission plugin "EventRateLimit"/);
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration: {apiVersion: pod-security.admission.config.k8s.io/v1, kind: PodSecurityConfiguration, defaults: {enforce: nope}}\n');
    await assert.rejects(loadAdmissionConfiguration(bad), /PodSecurity: defaults\.enforce: Invalid value: "nope"/);
  });

  it('nodelet server --admission-control-config-file stops at a bad file, naming the field', async () => {
    const file = join(dir, 'flag.yaml');
    await writeFile(file, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration: {apiVersion: pod-security.admission.config.k8s.io/v1, kind: PodSecurityConfiguration, exemptions: {namespaces: [Kube_System]}}\n');
    const dev = fileURLToPath(new URL('../../../../../bin/nodelet-dev', import.meta.url));
    const r = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(dev, ['server', '--data-dir', join(dir, 'data'), '--admission-control-config-file', file], { timeout: 60_000 }, (err, _out, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }));
    });
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^--admission-control-config-file: .*flag\.yaml: PodSecurity: exemptions\.namespaces\[0\]: Invalid value: "Kube_System"/);
  });
});
