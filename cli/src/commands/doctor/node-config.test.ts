import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectNodeConfig, type DetectFs } from './node-config.js';

function fs(files: Record<string, string>): DetectFs {
  return {
    exists: (p) => p in files,
    read: (p) => {
      if (!(p in files)) throw new Error(`ENOENT ${p}`);
      return files[p]!;
    },
  };
}

const LAB_YAML = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix:///var/lib/nodelet/lab/containerd/containerd.sock
rootDir: /var/lib/nodelet/lab/agent
cniBinDir: /var/lib/nodelet/lab/cni/bin
cniConfDir: /var/lib/nodelet/lab/cni/net.d
cniBridgeName: nodelet0
cniIpamDataDir: /var/lib/nodelet/lab/cni/ipam
cniCacheDir: /var/lib/nodelet/lab/cni/cache
`;
const KUBECONFIG = 'users:\n- name: system:node:lab-1\n  user: { tokenFile: /x }\n';

test('no flags, no containerd socket, a make-up lab: its agent config and credential are used', () => {
  const d = detectNodeConfig({ explicit: new Set(), fs: fs({ '/var/lib/nodelet/lab/agent.yaml': LAB_YAML, '/var/lib/nodelet/lab/agent.kubeconfig': KUBECONFIG }) });
  assert.equal(d?.source, 'lab agent config /var/lib/nodelet/lab/agent.yaml');
  assert.deepEqual(d?.values, {
    containerRuntimeEndpoint: 'unix:///var/lib/nodelet/lab/containerd/containerd.sock',
    cniConfDir: '/var/lib/nodelet/lab/cni/net.d',
    cniBinDir: '/var/lib/nodelet/lab/cni/bin',
    cniCacheDir: '/var/lib/nodelet/lab/cni/cache',
    ipamDir: '/var/lib/nodelet/lab/cni/ipam',
    netnsDir: '/var/lib/nodelet/lab/containerd/state/io.containerd.grpc.v1.cri/netns',
    bridge: 'nodelet0',
    rootDir: '/var/lib/nodelet/lab/agent',
    kubeconfig: '/var/lib/nodelet/lab/agent.kubeconfig',
    nodeName: 'lab-1',
  });
});

test('the system containerd is there: the lab is not guessed; /etc/nodelet/agent.yaml wins when present', () => {
  assert.equal(detectNodeConfig({ explicit: new Set(), fs: fs({ '/run/containerd/containerd.sock': '', '/var/lib/nodelet/lab/agent.yaml': LAB_YAML }) }), undefined);
  const d = detectNodeConfig({ explicit: new Set(), fs: fs({ '/etc/nodelet/agent.yaml': 'cniCacheDir: /var/lib/nodelet/cni\ncniIpamDataDir: /var/lib/nodelet/cni/networks\ncontainerRuntimeEndpoint: /run/k.sock\n', '/var/lib/nodelet/lab/agent.yaml': LAB_YAML }) });
  assert.equal(d?.source, 'agent config /etc/nodelet/agent.yaml');
  assert.deepEqual(d?.values, { containerRuntimeEndpoint: 'unix:///run/k.sock', cniCacheDir: '/var/lib/nodelet/cni', ipamDir: '/var/lib/nodelet/cni/networks' });
});

test('runtime or CNI flags given: nothing is detected; --lab on an older lab falls back to the lab paths', () => {
  assert.equal(detectNodeConfig({ explicit: new Set(['containerRuntimeEndpoint']), fs: fs({ '/etc/nodelet/agent.yaml': LAB_YAML }) }), undefined);
  const d = detectNodeConfig({ lab: '/srv/lab', explicit: new Set(), fs: fs({ '/srv/lab/agent.yaml': 'cniBridgeName: lab9\n' }) });
  assert.equal(d?.source, 'lab agent config /srv/lab/agent.yaml');
  assert.equal(d?.values.containerRuntimeEndpoint, 'unix:///srv/lab/containerd/containerd.sock');
  assert.equal(d?.values.bridge, 'lab9');
  assert.equal(d?.values.nodeName, undefined);
});
