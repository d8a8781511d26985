// The real kubectl 1.32 reading the server's /openapi/v3 schemas: `kubectl explain`, client-side
// apply patches computed from the schemas' merge keys, and `--validate=strict` server-side field
// validation at every depth.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlUnavailableReason, startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';

const skip = kubectlUnavailableReason();

const deployment = (name: string, containers: string): string => `apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}}
spec:
  replicas: 1
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
${containers}`;

describe('kubectl explain and --validate=strict against the server’s OpenAPI', { skip }, () => {
  let env: KubectlEnv;
  before(async () => {
    env = await startKubectlEnv();
  });
  after(() => env?.close());

  it('explain deployment.spec.strategy prints the field, its type, its fields with types, enums and descriptions', async () => {
    const k = await env.newKubectl();
    const r = await k(['explain', 'deployment.spec.strategy']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n\nFIELD: strategy <DeploymentStrategy>/);
    assert.match(r.stdout, /DESCRIPTION:\n\s+How old pods are replaced by new ones\.\n\s+How a Deployment replaces pods\./);
    assert.match(r.stdout, /^ {2}rollingUpdate\t<RollingUpdateDeployment>\n {4}Pace of a rolling update; only with type RollingUpdate\./m);
    assert.match(r.stdout, /^ {2}type\t<string>\n {2}enum: Recreate, RollingUpdate\n {4}`RollingUpdate` \(default\)/m);
    const ru = await k(['explain', 'deploy.spec.strategy.rollingUpdate']);
    assert.match(ru.stdout, /^ {2}maxSurge\t<IntOrString>$/m);
  });

  it('explain walks lists, other groups and required fields; an unknown field is an error', async () => {
    const k = await env.newKubectl();
    const ports = await k(['explain', 'pods.spec.containers.ports']);
    assert.equal(ports.code, 0, ports.stderr);
    assert.match(ports.stdout, /^FIELD: ports <\[\]ContainerPort>/m);
    assert.match(ports.stdout, /^ {2}containerPort\t<integer> -required-$/m);
    assert.match(ports.stdout, /^ {2}protocol\t<string>\n {2}enum: SCTP, TCP, UDP$/m);
    const pdb = await k(['explain', 'pdb.spec']);
    assert.match(pdb.stdout, /^GROUP:\s+policy$/m);
    assert.match(pdb.stdout, /^ {2}minAvailable\t<IntOrString>$/m);
    const rc = await k(['explain', 'runtimeclass']);
    assert.match(rc.stdout, /^ {2}handler\t<string> -required-$/m);
    const recursive = await k(['explain', 'job.spec', '--recursive']);
    assert.equal(recursive.code, 0, recursive.stderr);
    assert.match(recursive.stdout, /^ {2}podFailurePolicy\t<PodFailurePolicy>\n {4}rules\t<\[\]PodFailurePolicyRule> -required-$/m);
    const missing = await k(['explain', 'deployment.spec.nope']);
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /field "nope" does not exist/);
  });

  it('--validate=strict (the default) refuses unknown fields at any depth; warn creates with warnings', async () => {
    const k = await env.newKubectl();
    const bad = deployment('typo', '      - {name: c, image: busybox:1.36, imagePullPolice: Always}\n') + '  replicaz: 2\n';
    const strict = await k(['apply', '--validate=strict', '-f', '-'], { stdin: bad });
    assert.notEqual(strict.code, 0);
    assert.match(strict.stderr, /Error from server \(BadRequest\): error when creating "STDIN": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec\.replicaz", unknown field "spec\.template\.spec\.containers\[0\]\.imagePullPolice"/);
    assert.equal((await k(['get', 'deploy', 'typo'])).code, 1, 'nothing created');
    const byDefault = await k(['create', '-f', '-'], { stdin: bad });
    assert.match(byDefault.stderr, /strict decoding error: .*unknown field "spec\.template\.spec\.containers\[0\]\.imagePullPolice"/);
    const warn = await k(['apply', '--validate=warn', '-f', '-'], { stdin: bad });
    assert.equal(warn.code, 0, warn.stderr);
    assert.match(warn.stderr, /Warning: unknown field "spec\.replicaz"/);
    const ssa = await k(['apply', '--server-side', '-f', '-'], { stdin: bad });
    assert.notEqual(ssa.code, 0);
    assert.match(ssa.stderr, /\.spec\.template\.spec\.containers\[name="c"\]\.imagePullPolice: field not declared in schema/);
  });

  it('client-side apply computes its patch from the schemas (containers merged by name) without asking for /openapi/v2', async () => {
    const k = await env.newKubectl();
    const two = (image: string): string => deployment('merge', `      - {name: a, image: busybox:1.36, env: [{name: X, value: "1"}]}\n      - {name: b, image: ${image}}\n`);
    assert.equal((await k(['apply', '-f', '-'], { stdin: two('busybox:1.36') })).code, 0);
    const again = await k(['apply', '-f', '-', '-v=6'], { stdin: two('busybox:1.37') });
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /deployment\.apps\/merge configured/);
    assert.match(again.stderr, /GET https:\/\/[^ ]+\/openapi\/v3\/apis\/apps\/v1\?hash=/);
    assert.doesNotMatch(again.stderr, /\/openapi\/v2/);
    const containers = JSON.parse((await k(['get', 'deploy', 'merge', '-o', 'jsonpath={.spec.template.spec.containers}'])).stdout) as Array<{ name: string; image: string; env?: unknown }>;
    assert.deepEqual(containers.map((c) => [c.name, c.image]), [['a', 'busybox:1.36'], ['b', 'busybox:1.37']]);
    assert.deepEqual(containers[0]!.env, [{ name: 'X', value: '1' }]);
  });
});
