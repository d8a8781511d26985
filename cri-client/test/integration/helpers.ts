// Shared bits of the cri-client integration tests: a private containerd from the lab harness on
// this suite's own bridge/subnet (nla*, 10.231.0.0/16), and pod/container configs.
import type { TestContext } from 'node:test';
import { mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestRuntime, type TestRuntime } from '@nodelet/lab-runtime/testing';
import { createCriClient, type CriClient, type PodSandboxConfig, type ContainerConfig } from '@nodelet/cri-client';

/** Label put on everything these tests create, so cleanup can find leftovers. */
export const TEST_LABEL = { 'nodelet.test/suite': 'cri-client' };

export interface Env {
  rt: TestRuntime;
  cri: CriClient;
  logDir: string;
}

/** Starts the runtime and a client; registers cleanup that runs even when a test failed. */
export async function startEnv(t: { after(fn: () => Promise<void>): void }, name: string, bridge: string, subnet: string): Promise<Env> {
  const rt = await startTestRuntime({ name, bridge: { name: bridge, subnet } });
  const cri = createCriClient({ endpoint: rt.endpoint, timeoutMs: 60_000 });
  const logDir = await mkdtemp(join(tmpdir(), `nodelet-cri-logs-${name}-`));
  t.after(async () => {
    await removeAllTestSandboxes(cri).catch(() => {});
    cri.close();
    await rt.stop();
    await removeCgroupParent();
    await rm(logDir, { recursive: true, force: true });
  });
  return { rt, cri, logDir };
}

export async function removeAllTestSandboxes(cri: CriClient): Promise<void> {
  const { items } = await cri.runtime.listPodSandbox({ filter: { labelSelector: TEST_LABEL } }, { timeoutMs: 30_000 });
  for (const sb of items) {
    await cri.runtime.stopPodSandbox({ podSandboxId: sb.id }, { timeoutMs: 30_000 }).catch(() => {});
    await cri.runtime.removePodSandbox({ podSandboxId: sb.id }, { timeoutMs: 30_000 });
  }
}

/**
 * cgroup parent of our sandboxes (cgroupfs syntax). containerd 1.6 only reports sandbox stats for
 * sandboxes that have one, as the kubelet always sets it.
 */
export const CGROUP_PARENT = `/nodelet-cri-it-${process.pid}`;

/** runc removes the containers' cgroups but not the parent we named: remove it in every hierarchy. */
async function removeCgroupParent(): Promise<void> {
  const rmTree = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) if (e.isDirectory()) await rmTree(join(dir, e.name));
    await rmdir(dir).catch(() => {});
  };
  const roots = await readdir('/sys/fs/cgroup', { withFileTypes: true }).catch(() => []);
  await rmTree(join('/sys/fs/cgroup', CGROUP_PARENT)); // cgroup v2 unified
  for (const r of roots) if (r.isDirectory()) await rmTree(join('/sys/fs/cgroup', r.name, CGROUP_PARENT));
}

let seq = 0;
export function podConfig(name: string, logDir: string, extra: Partial<PodSandboxConfig> = {}): PodSandboxConfig {
  seq += 1;
  const uid = `${name}-uid-${process.pid}-${seq}`;
  return {
    metadata: { name, namespace: 'default', uid, attempt: 0 },
    hostname: name,
    logDirectory: join(logDir, uid),
    labels: { ...TEST_LABEL, 'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': 'default', 'io.kubernetes.pod.uid': uid },
    linux: { cgroupParent: `${CGROUP_PARENT}/pod${uid}` },
    ...extra,
  };
}

export function containerConfig(name: string, image: string, command: string[], extra: Partial<ContainerConfig> = {}): ContainerConfig {
  return {
    metadata: { name, attempt: 0 },
    image: { image },
    command,
    logPath: `${name}/0.log`,
    labels: { ...TEST_LABEL, 'io.kubernetes.container.name': name },
    linux: {},
    ...extra,
  };
}


export type { TestContext };
