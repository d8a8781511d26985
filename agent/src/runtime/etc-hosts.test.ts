import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Pod } from '@nodelet/api';
import { ensureHostsFile, managedHostsContent } from './etc-hosts.js';
import { podHostnameAndDomain, sandboxHostname } from './pod-hostname.js';
import { buildSandboxConfig } from './container-config.js';

const UID = '0b5a3c4e-1111-4222-8333-944455556666';
const HEADER = '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n';

test('managed hosts file: kubelet\'s lines, the pod\'s IPs with FQDN for a subdomain, then the HostAliases block', () => {
  assert.equal(managedHostsContent(['10.1.0.5'], 'web', '', undefined), `${HEADER}10.1.0.5\tweb\n`);
  assert.equal(
    managedHostsContent(['10.1.0.5', 'fd00::5'], 'web-0', 'web.prod.svc.cluster.local', [{ ip: '127.0.0.1', hostnames: ['foo.local', 'bar.local'] }, { ip: '10.1.2.3', hostnames: ['legacy'] }]),
    `${HEADER}10.1.0.5\tweb-0.web.prod.svc.cluster.local\tweb-0\nfd00::5\tweb-0.web.prod.svc.cluster.local\tweb-0\n\n# Entries added by HostAliases.\n127.0.0.1\tfoo.local\tbar.local\n10.1.2.3\tlegacy\n`,
  );
  const long: Pod = { metadata: { name: `${'a'.repeat(62)}-xyz`, namespace: 'ns' }, spec: { containers: [], subdomain: 'sub' } };
  assert.deepEqual(podHostnameAndDomain(long, 'example.org'), { hostname: 'a'.repeat(62), domain: 'sub.ns.svc.example.org' });
  assert.equal(podHostnameAndDomain({ ...long, spec: { containers: [], hostname: 'h' } }, 'c').hostname, 'h');
});

test('setHostnameAsFQDN: the sandbox hostname is the FQDN when the pod has a subdomain, refused over 64 characters with kubelet\'s message', () => {
  const pod = (name: string, fqdn: boolean, subdomain?: string): Pod => ({ metadata: { name, namespace: 'prod' }, spec: { containers: [], setHostnameAsFQDN: fqdn, ...(subdomain ? { subdomain } : {}) } });
  assert.equal(sandboxHostname(pod('web-0', true, 'web'), 'cluster.local'), 'web-0.web.prod.svc.cluster.local');
  assert.equal(sandboxHostname(pod('web-0', false, 'web'), 'cluster.local'), 'web-0', 'off: the short name');
  assert.equal(sandboxHostname(pod('web-0', true), 'cluster.local'), 'web-0', 'no subdomain: no domain to add');
  assert.equal(buildSandboxConfig(pod('web-0', true, 'web'), 0, { rootDir: '/r', podLogsDir: '/l' }, undefined, false, undefined, 'example.org').hostname, 'web-0.web.prod.svc.example.org');
  assert.throws(() => sandboxHostname(pod('a'.repeat(40), true, 'web'), 'cluster.local'),
    /^AgentError: failed to construct FQDN from pod hostname and cluster domain, FQDN a{40}\.web\.prod\.svc\.cluster\.local is too long \(64 characters is the max, 67 characters requested\)$/);
});

test('ensureHostsFile writes the pod\'s file and mounts it, except where a container mounts /etc/hosts or no IP is known; host network copies the node\'s', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'nodelet-hosts-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const pod: Pod = { metadata: { name: 'p', namespace: 'default', uid: UID }, spec: { containers: [{ name: 'c' }], hostAliases: [{ ip: '10.9.9.9', hostnames: ['alias'] }] } };
  const o = { rootDir: root, clusterDomain: 'cluster.local' };
  const m = await ensureHostsFile(pod, pod.spec!.containers[0]!, ['10.1.0.7'], o);
  assert.deepEqual(m, { containerPath: '/etc/hosts', hostPath: join(root, 'pods', UID, 'etc-hosts'), readonly: false, propagation: 'PROPAGATION_PRIVATE' });
  assert.equal(await readFile(m.hostPath!, 'utf8'), `${HEADER}10.1.0.7\tp\n\n# Entries added by HostAliases.\n10.9.9.9\talias\n`);
  assert.equal(await ensureHostsFile(pod, { name: 'own', volumeMounts: [{ name: 'v', mountPath: '/etc/hosts' }] }, ['10.1.0.7'], o), undefined);
  assert.equal(await ensureHostsFile(pod, { name: 'c' }, [], o), undefined);
  const nodeHosts = join(root, 'node-hosts');
  await writeFile(nodeHosts, '127.0.0.1 localhost\n192.168.1.2 node-a\n');
  const hn: Pod = { ...pod, spec: { ...pod.spec!, hostNetwork: true } };
  const hm = await ensureHostsFile(hn, { name: 'c' }, ['192.168.1.2'], { ...o, nodeHostsFile: nodeHosts });
  assert.equal(await readFile(hm!.hostPath!, 'utf8'), '127.0.0.1 localhost\n192.168.1.2 node-a\n\n# Entries added by HostAliases.\n10.9.9.9\talias\n');
});
