/**
 * Brings up, for one integration test file: a private containerd (lab runtime, local registry)
 * whose CNI dirs belong to the agent, an API server, and a real Agent on bridge `nlg0` with a pod
 * CIDR inside 10.234.0.0/16. `stop()` deletes every pod through the API, waits until the runtime
 * has nothing left, and tears everything down (bridge, IPAM data, temp dirs) even on failure.
 *
 * By default the agent talks to the API server with the admin token and serves a certificate the
 * harness issues from the cluster CA (the API server verifies agents). With `asNode` it is a
 * joined node instead: its own node credential in a token-file kubeconfig, its serving
 * certificate through the CSR flow, with the given controllers (approver, signer) running.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { stringify as stringifyYaml } from 'yaml';
import { createCriClient, type CriClient } from '@nodelet/cri-client';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { noopLogger, pollUntil, type Logger } from '@nodelet/base';
import { readFile } from 'node:fs/promises';
import { ApiClient, EVENTS, loadKubeconfig, PODS, requestNodeCredential, writeCredential, writeKubeconfig, type Pod } from '@nodelet/api';
import { issueCertificate, loadCa, startControlPlane, type ControlPlane, type ControlPlaneOptions } from '@nodelet/control-plane';
import { startTestRuntime, unmountUnder, type TestRuntime } from '@nodelet/lab-runtime/testing';
import { Agent } from '../../src/agent.js';
import { resolveConfig, type KubeletConfigurationFile } from '../../src/config/config.js';
import type { ShutdownInhibitor } from '@nodelet/systemd';

export const BRIDGE = 'nlg0';

export interface Harness {
  rt: TestRuntime;
  /** The admin's client. */
  api: ApiClient;
  /** The kubeconfig the agent uses (the admin's, or the node's with `asNode`). */
  kubeconfigPath: string;
  /** The real API server (`nodelet server` in-process, SQLite, no controllers unless `asNode` names some). */
  cp: ControlPlane;
  /** The in-process agent (unset with `inProcessAgent: false`). */
  agent: Agent;
  /** A CRI client of the test's own, to look at the runtime directly. */
  cri: CriClient;
  /** `nodelet agent …` arguments for running the same agent as a child process. */
  agentArgs: string[];
  dir: string;
  nodeName: string;
  podCIDR: string;
  /** Run after pods are deleted and the agent is closed, before the runtime is stopped. */
  beforeRuntimeStop: Array<() => Promise<void>>;
  /** Starts (again) an agent with the same configuration (plus `overrides` to the file's), e.g. after `agent.close()` or a kill. */
  restartAgent(overrides?: KubeletConfigurationFile): Promise<Agent>;
  /** Stops the API server (and its controllers); `startServer()` brings it back on the same port and data. */
  stopServer(): Promise<void>;
  startServer(): Promise<ControlPlane>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  inProcessAgent?: boolean;
  /** logind for graceful node shutdown (a fake; default: the real one, absent on this host). */
  inhibitor?: ShutdownInhibitor;
  /** Run the agent as a joined node (see the file comment). */
  asNode?: Pick<ControlPlaneOptions, 'nodeCredentialTtlMs' | 'clusterSigningDurationMs'> & { controllers: Exclude<ControlPlaneOptions['controllers'], boolean | undefined> };
  /** Controllers to run beside the API server (no scheduler: pods name their node), e.g. deployment + replicaset. */
  controllers?: Exclude<ControlPlaneOptions['controllers'], boolean | undefined>;
  /**
   * The address the agent listens on and reports as its InternalIP (default 127.0.0.1). The API
   * server's nodes/proxy refuses loopback agents, as kube-apiserver does, so a test that reads the
   * agent through it passes one of this machine's own addresses.
   */
  nodeAddress?: string;
}

export function skipUnlessRoot(t: { skip(msg?: string): void }): boolean {
  if (process.env.AGENT_IT !== '1') {
    t.skip('integration test: run with node scripts/run-tests.mjs integration agent');
    return false;
  }
  if (process.getuid?.() !== 0) {
    t.skip('needs root (containerd, network namespaces)');
    return false;
  }
  for (const bin of ['containerd', 'runc']) {
    if (spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0) {
      t.skip(`${bin} not installed`);
      return false;
    }
  }
  if (!existsSync('/usr/lib/cni/bridge') && !existsSync('/opt/cni/bin/bridge')) {
    t.skip('CNI plugins not installed (containernetworking-plugins)');
    return false;
  }
  return true;
}

function logger(): Logger {
  if (!process.env.AGENT_IT_LOG) return noopLogger;
  const mk = (b: Record<string, unknown>): Logger => ({
    error: (o, m) => console.error('ERROR', m, JSON.stringify({ ...b, ...o })),
    warn: (o, m) => console.error('WARN', m, JSON.stringify({ ...b, ...o })),
    info: (o, m) => console.error('INFO', m, JSON.stringify({ ...b, ...o })),
    debug: () => {},
    child: (x) => mk({ ...b, ...x }),
  });
  return mk({});
}

export async function startHarness(name: string, file: KubeletConfigurationFile = {}, subnet = 1, opts: HarnessOptions = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), `nodelet-agent-it-${name}-`));
  const cniBin = join(dir, 'cni-bin');
  const cniConf = join(dir, 'cni-conf');
  await mkdir(cniBin, { recursive: true });
  await mkdir(cniConf, { recursive: true });
  const podCIDR = `10.234.${subnet}.0/24`;
  const nodeAddress = opts.nodeAddress ?? '127.0.0.1';
  const nodeName = `nlg-${name}`;
  let rt: TestRuntime | undefined;
  let cp: ControlPlane | undefined;
  let agent: Agent | undefined;
  const cleanups: Array<() => Promise<unknown>> = [];
  const cleanup = async (): Promise<void> => {
    for (const f of cleanups.reverse()) await f().catch((err: unknown) => console.error('# cleanup:', err));
    cleanups.length = 0;
  };
  try {
    rt = await startTestRuntime({ name: `agent-${name}`, cni: { binDir: cniBin, confDir: cniConf } });
    cleanups.push(() => rt!.stop());
    cleanups.push(async () => {
      if (existsSync(`/sys/class/net/${BRIDGE}`)) spawnSync('ip', ['link', 'del', BRIDGE]);
      // A pod deleted just before the agent closed may still have its volumes mounted (the agent's
      // orphan cleanup had no turn yet); rm would stop at the mount and leave it behind.
      await unmountUnder(dir);
      await rm(dir, { recursive: true, force: true });
    });
    const asNode = opts.asNode;
    const cpOptions: ControlPlaneOptions = {
      dataDir: join(dir, 'server'), bindAddress: '127.0.0.1', port: 0, registryAddress: '',
      controllers: asNode?.controllers ?? opts.controllers ?? false,
      ...(asNode?.nodeCredentialTtlMs ? { nodeCredentialTtlMs: asNode.nodeCredentialTtlMs } : {}),
      ...(asNode?.clusterSigningDurationMs ? { clusterSigningDurationMs: asNode.clusterSigningDurationMs } : {}),
    };
    cp = await startControlPlane(cpOptions);
    // Later starts reuse the port, so clients configured with the URL find the server again.
    cpOptions.port = cp.port;
    cleanups.push(() => cp!.close());
    // protobuf: true as the agent's main.ts sets it (this client is the agent's too unless asNode).
    const api = new ApiClient({ server: cp.url, token: cp.adminToken, ca: cp.caPem, timeoutMs: 30_000, protobuf: true });
    cleanups.push(async () => api.close());
    // The agent's identity: what `nodelet join` writes, or the admin kubeconfig.
    let kubeconfigPath = cp.kubeconfigPath;
    let tls: KubeletConfigurationFile = {};
    if (asNode) {
      kubeconfigPath = join(dir, 'agent.kubeconfig');
      const tokenFile = join(dir, 'agent.token');
      const issued = await requestNodeCredential(api, nodeName);
      await writeCredential({ kind: 'tokenFile', path: tokenFile }, issued.token, { issuedAt: Date.now(), expiresAt: issued.expiresAt! });
      await writeKubeconfig(kubeconfigPath, { server: cp.url, caData: cp.caPem, tokenFile, user: issued.user });
    } else {
      const pki = join(dir, 'server', 'pki');
      const ca = await loadCa({ certPem: await readFile(join(pki, 'ca.crt'), 'utf8'), keyPem: await readFile(join(pki, 'ca.key'), 'utf8') });
      const serving = await issueCertificate(ca, { commonName: `system:node:${nodeName}`, usage: 'server', ips: [nodeAddress], dnsNames: [nodeName] });
      tls = { tlsCertFile: join(dir, 'agent-tls.crt'), tlsPrivateKeyFile: join(dir, 'agent-tls.key') };
      await writeFile(tls.tlsCertFile!, serving.certPem);
      await writeFile(tls.tlsPrivateKeyFile!, serving.keyPem, { mode: 0o600 });
    }
    const agentApi = asNode ? new ApiClient({ ...(await loadKubeconfig(kubeconfigPath)), timeoutMs: 30_000, protobuf: true }) : api;
    if (asNode) cleanups.push(async () => agentApi.close());
    const fileConfig: KubeletConfigurationFile = {
        nodeStatusUpdateFrequency: '2s',
        syncFrequency: '10s',
        fileCheckFrequency: '1s',
        ...tls,
        // The host's one service proxy table is not these tests' to touch (proxy tests: agent/test/integration/proxy-*.itest.ts).
        proxy: { mode: 'none' },
        // Agents of concurrent tests share the host's cgroup tree: pod cgroups only where a test asks (cgroups.itest.ts).
        cgroupsPerQOS: false,
        // Nor are the host's routes and VXLAN device (routing tests: agent/test/integration/pod-routes.itest.ts).
        podNetwork: { backend: 'none' },
        ...file,
        containerRuntimeEndpoint: rt.endpoint,
        cniBridgeName: BRIDGE,
        cniCacheDir: join(dir, 'cni-cache'),
        cniIpamDataDir: join(dir, 'ipam'),
        cniSocketPath: join(dir, 'cni.sock'),
        cniPluginDirs: ['/usr/lib/cni', '/opt/cni/bin'],
        // Loopback unless asked otherwise: the API server's proxy reaches the node API at the node's InternalIP.
        address: nodeAddress,
        nodeIP: nodeAddress,
        // The API server's pods/log and pods/exec proxy presents its agent client certificate.
        authentication: { anonymous: { enabled: false }, x509: { clientCAFile: join(dir, 'server', 'pki', 'ca.crt') } },
    };
    const flags = { nodeName, rootDir: join(dir, 'root'), cniBinDir: cniBin, cniConfDir: cniConf, podCidr: podCIDR, port: 0, healthzPort: 0 };
    const config = resolveConfig(fileConfig, flags, 'unused');
    const log = logger();
    const start = (overrides?: KubeletConfigurationFile): Promise<Agent> => Agent.start({
      config: overrides ? resolveConfig({ ...fileConfig, ...overrides }, flags, 'unused') : config,
      api: agentApi, log, runtimeWaitMs: 10_000, kubeconfigPath, inhibitor: opts.inhibitor,
    });
    if (opts.inProcessAgent !== false) agent = await start();
    const cri = createCriClient({ endpoint: rt.endpoint });
    cleanups.push(async () => cri.close());
    const configPath = join(dir, 'agent.yaml');
    await writeFile(configPath, stringifyYaml({ ...fileConfig, kind: 'KubeletConfiguration', port: 0, healthzPort: 0 }));
    const h: Harness = {
      rt,
      api,
      kubeconfigPath,
      cp,
      agent: agent!,
      cri,
      dir,
      nodeName,
      podCIDR,
      beforeRuntimeStop: [],
      agentArgs: [
        'agent', '--config', configPath, '--kubeconfig', kubeconfigPath, '--node-name', nodeName, '--root-dir', flags.rootDir,
        '--cni-bin-dir', cniBin, '--cni-conf-dir', cniConf, '--pod-cidr', podCIDR, '--log-level', process.env.AGENT_IT_LOG ? 'info' : 'warn',
      ],
      async restartAgent(overrides) {
        h.agent = await start(overrides);
        return h.agent;
      },
      async stopServer() {
        await cp!.close();
      },
      async startServer() {
        cp = h.cp = await startControlPlane(cpOptions);
        return cp;
      },
      async stop() {
        try {
          await deleteAllPods(h);
        } finally {
          await h.agent?.close().catch(() => undefined);
          for (const f of h.beforeRuntimeStop) await f().catch((err: unknown) => console.error('# cleanup:', err));
          await cleanup();
        }
      },
    };
    return h;
  } catch (err) {
    await agent?.close().catch(() => undefined);
    await cleanup();
    throw err;
  }
}

async function deleteAllPods(h: Harness): Promise<void> {
  const pods = await h.api.list(PODS, {});
  await Promise.all(pods.items.map((p) => h.api.delete(PODS, p.metadata.name!, { namespace: p.metadata.namespace, gracePeriodSeconds: 1 }).catch(() => undefined)));
  await pollUntil('runtime empty after deleting every pod', async () => {
    const [s, c] = await Promise.all([h.cri.runtime.listPodSandbox({}), h.cri.runtime.listContainers({})]);
    return s.items.length === 0 && c.containers.length === 0;
  }, { timeoutMs: 60_000 }).catch((err: unknown) => console.error('#', String(err)));
}


export function podSpec(h: Harness, name: string, spec: Partial<NonNullable<Pod['spec']>>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      nodeName: h.nodeName,
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 2,
      containers: [],
      ...spec,
    },
  };
}

export async function getPod(h: Harness, name: string, ns = 'default'): Promise<Pod> {
  return h.api.get(PODS, name, { namespace: ns });
}

/**
 * The agent refused pod `name` at admission under node pressure (agent/src/admission/): it is
 * Failed with reason Evicted and "Pod was rejected: <message>", a Warning event carries the
 * message, and the runtime never got a sandbox for it.
 */
export async function expectRefusedUnderPressure(h: Harness, name: string, message: string): Promise<void> {
  const refused = await pollUntil(`${name} refused`, async () => {
    const p = await getPod(h, name);
    return p.status?.phase === 'Failed' ? p : undefined;
  }, { timeoutMs: 20_000 });
  assert.deepEqual([refused.status?.reason, refused.status?.message], ['Evicted', `Pod was rejected: ${message}`]);
  await pollUntil(`the refusal event of ${name}`, async () => (await h.api.list(EVENTS, { namespace: 'default' })).items.some((e) =>
    e.reason === 'Evicted' && e.type === 'Warning' && e.involvedObject?.name === name && e.message === message), { timeoutMs: 15_000 });
  const sandboxes = (await h.cri.runtime.listPodSandbox({})).items.filter((s) => s.metadata?.name === name);
  assert.equal(sandboxes.length, 0, 'a refused pod never gets a sandbox');
}

export function inCidr(ip: string | undefined, cidr: string): boolean {
  if (!ip) return false;
  const [base, bits] = cidr.split('/');
  const toInt = (s: string) => s.split('.').reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
  const mask = bits === '0' ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return (toInt(ip) & mask) === (toInt(base!) & mask);
}
