/**
 * runtime.v1.RuntimeService handlers over {@link FakeRuntimeService}.
 * Each handler is a plain async function (request) → reply; fake-server.ts adapts them to grpc-js.
 */
import { join } from 'node:path';
import type * as p from '@nodelet/proto';
import { byIdOrPrefix, labelsMatch, newId, nowNs, rpcError, type FakeContainer, type FakeRuntimeService, type FakeSandbox } from './fake-runtime-service.js';

type Handler = (req: never) => Promise<object> | object;

function sandboxOf(state: FakeRuntimeService, id: string | undefined): FakeSandbox {
  const sb = byIdOrPrefix(state.sandboxes, id, 'sandbox');
  if (!sb) throw rpcError('NOT_FOUND', `an error occurred when try to find sandbox "${id ?? ''}": not found`);
  return sb;
}

function containerOf(state: FakeRuntimeService, id: string | undefined): FakeContainer {
  const c = byIdOrPrefix(state.containers, id, 'container');
  if (!c) throw rpcError('NOT_FOUND', `an error occurred when try to find container "${id ?? ''}": not found`);
  return c;
}

function sandboxView(sb: FakeSandbox): p.PodSandbox {
  return {
    id: sb.id,
    metadata: sb.config.metadata ?? null,
    state: sb.state,
    createdAt: sb.createdAt.toString(),
    labels: sb.config.labels ?? {},
    annotations: sb.config.annotations ?? {},
    runtimeHandler: sb.runtimeHandler,
  };
}

function containerStatusView(c: FakeContainer): p.ContainerStatus {
  return {
    id: c.id,
    metadata: c.config.metadata ?? null,
    state: c.state,
    createdAt: c.createdAt.toString(),
    startedAt: c.startedAt.toString(),
    finishedAt: c.finishedAt.toString(),
    exitCode: c.exitCode,
    image: c.config.image ?? null,
    imageRef: c.imageRef,
    reason: c.reason,
    message: c.message,
    labels: c.config.labels ?? {},
    annotations: c.config.annotations ?? {},
    mounts: c.config.mounts ?? [],
    logPath: c.logPath,
  };
}

function statsOf(c: FakeContainer): p.ContainerStats {
  const ts = nowNs().toString();
  const running = c.state === 'CONTAINER_RUNNING';
  const cpuNs = running ? (nowNs() - c.startedAt) / 100n : 0n; // 1 % of one core
  return {
    attributes: { id: c.id, metadata: c.config.metadata ?? null, labels: c.config.labels ?? {}, annotations: c.config.annotations ?? {} },
    cpu: { timestamp: ts, usageCoreNanoSeconds: { value: cpuNs.toString() }, usageNanoCores: { value: running ? '10000000' : '0' } },
    memory: { timestamp: ts, workingSetBytes: { value: running ? '1048576' : '0' }, usageBytes: { value: running ? '2097152' : '0' } },
    writableLayer: { timestamp: ts, fsId: { mountpoint: '/fake/rootfs' }, usedBytes: { value: '4096' }, inodesUsed: { value: '3' } },
  };
}

/** RuntimeService handlers, keyed by gRPC method name. */
export function fakeRuntimeHandlers(state: FakeRuntimeService): Record<string, Handler> {
  return {
    Version: () => state.version,

    RunPodSandbox: (req: p.RunPodSandboxRequest) => {
      const md = req.config?.metadata;
      if (!md?.name || !md.uid || !md.namespace) throw rpcError('INVALID_ARGUMENT', 'sandbox config must include metadata name, uid and namespace');
      for (const sb of state.sandboxes.values()) {
        const o = sb.config.metadata;
        if (o?.name === md.name && o.namespace === md.namespace && o.uid === md.uid && (o.attempt ?? 0) === (md.attempt ?? 0)) {
          throw rpcError('UNKNOWN', `failed to reserve sandbox name "${md.name}_${md.namespace}_${md.uid}_${md.attempt ?? 0}": name is reserved for "${sb.id}"`);
        }
      }
      const id = newId();
      state.sandboxes.set(id, {
        id,
        config: req.config ?? {},
        runtimeHandler: req.runtimeHandler ?? '',
        state: 'SANDBOX_READY',
        createdAt: nowNs(),
        ip: state.nextIp(),
        netnsPath: `/var/run/netns/cni-${id.slice(0, 8)}`,
        pid: 4242,
      });
      return { podSandboxId: id };
    },

    StopPodSandbox: (req: p.StopPodSandboxRequest) => {
      const sb = sandboxOf(state, req.podSandboxId);
      for (const c of state.containers.values()) {
        if (c.sandboxId === sb.id && c.state === 'CONTAINER_RUNNING') state.exitContainer(c.id, 137, 'Error');
      }
      sb.state = 'SANDBOX_NOTREADY';
      return {};
    },

    RemovePodSandbox: (req: p.RemovePodSandboxRequest) => {
      const sb = byIdOrPrefix(state.sandboxes, req.podSandboxId, 'sandbox');
      if (!sb) return {}; // idempotent, like containerd
      for (const c of [...state.containers.values()]) if (c.sandboxId === sb.id) state.containers.delete(c.id);
      state.sandboxes.delete(sb.id);
      return {};
    },

    PodSandboxStatus: (req: p.PodSandboxStatusRequest) => {
      const sb = sandboxOf(state, req.podSandboxId);
      const info: Record<string, string> = {};
      if (req.verbose) {
        info['info'] = JSON.stringify({
          pid: sb.pid,
          runtimeHandler: sb.runtimeHandler,
          runtimeSpec: { linux: { namespaces: [{ type: 'pid' }, { type: 'network', path: sb.netnsPath }] } },
        });
      }
      return {
        status: {
          ...sandboxView(sb),
          network: { ip: sb.state === 'SANDBOX_READY' ? sb.ip : '', additionalIps: [] },
          linux: { namespaces: { options: sb.config.linux?.securityContext?.namespaceOptions ?? {} } },
        },
        info,
      };
    },

    ListPodSandbox: (req: p.ListPodSandboxRequest) => {
      const f = req.filter;
      const items = [...state.sandboxes.values()]
        .filter((sb) => !f?.id || sb.id.startsWith(f.id))
        .filter((sb) => !f?.state || sb.state === (f.state.state ?? 'SANDBOX_READY'))
        .filter((sb) => labelsMatch(sb.config.labels, f?.labelSelector))
        .map(sandboxView);
      return { items };
    },

    CreateContainer: (req: p.CreateContainerRequest) => {
      const sb = sandboxOf(state, req.podSandboxId);
      const md = req.config?.metadata;
      if (!md?.name) throw rpcError('INVALID_ARGUMENT', 'container config must include metadata name');
      const img = state.findImage(req.config?.image?.image);
      if (!img) throw rpcError('NOT_FOUND', `failed to get image "${req.config?.image?.image ?? ''}": not found`);
      for (const c of state.containers.values()) {
        if (c.sandboxId === sb.id && c.config.metadata?.name === md.name && (c.config.metadata.attempt ?? 0) === (md.attempt ?? 0)) {
          throw rpcError('UNKNOWN', `failed to reserve container name "${md.name}_${md.attempt ?? 0}": name is reserved for "${c.id}"`);
        }
      }
      const id = newId();
      const logDir = sb.config.logDirectory ?? '';
      state.containers.set(id, {
        id,
        sandboxId: sb.id,
        config: req.config ?? {},
        imageRef: img.id,
        state: 'CONTAINER_CREATED',
        createdAt: nowNs(),
        startedAt: 0n,
        finishedAt: 0n,
        exitCode: 0,
        reason: '',
        message: '',
        logPath: logDir && req.config?.logPath ? join(logDir, req.config.logPath) : '',
      });
      return { containerId: id };
    },

    StartContainer: (req: p.StartContainerRequest) => {
      const c = containerOf(state, req.containerId);
      if (c.state !== 'CONTAINER_CREATED') throw rpcError('UNKNOWN', `container "${c.id}" is in ${c.state} state`);
      c.state = 'CONTAINER_RUNNING';
      c.startedAt = nowNs();
      return {};
    },

    StopContainer: (req: p.StopContainerRequest) => {
      const c = containerOf(state, req.containerId);
      if (c.state === 'CONTAINER_RUNNING') state.exitContainer(c.id, 137, 'Error');
      return {};
    },

    RemoveContainer: (req: p.RemoveContainerRequest) => {
      const c = byIdOrPrefix(state.containers, req.containerId, 'container');
      if (c) state.containers.delete(c.id);
      return {};
    },

    ListContainers: (req: p.ListContainersRequest) => {
      const f = req.filter;
      const containers = [...state.containers.values()]
        .filter((c) => !f?.id || c.id.startsWith(f.id))
        .filter((c) => !f?.podSandboxId || c.sandboxId.startsWith(f.podSandboxId))
        .filter((c) => !f?.state || c.state === (f.state.state ?? 'CONTAINER_CREATED'))
        .filter((c) => labelsMatch(c.config.labels, f?.labelSelector))
        .map((c) => ({
          id: c.id,
          podSandboxId: c.sandboxId,
          metadata: c.config.metadata ?? null,
          image: c.config.image ?? null,
          imageRef: c.imageRef,
          state: c.state,
          createdAt: c.createdAt.toString(),
          labels: c.config.labels ?? {},
          annotations: c.config.annotations ?? {},
        }));
      return { containers };
    },

    ContainerStatus: (req: p.ContainerStatusRequest) => {
      const c = containerOf(state, req.containerId);
      const info: Record<string, string> = req.verbose ? { info: JSON.stringify({ sandboxID: c.sandboxId, pid: c.state === 'CONTAINER_RUNNING' ? 4343 : 0 }) } : {};
      return { status: containerStatusView(c), info };
    },

    UpdateContainerResources: (req: p.UpdateContainerResourcesRequest) => {
      const c = containerOf(state, req.containerId);
      c.config = { ...c.config, linux: { ...c.config.linux, resources: req.linux ?? null } };
      return {};
    },

    ReopenContainerLog: (req: p.ReopenContainerLogRequest) => {
      const c = containerOf(state, req.containerId);
      if (c.state !== 'CONTAINER_RUNNING') throw rpcError('UNKNOWN', `container "${c.id}" is not running`);
      return {};
    },

    ExecSync: (req: p.ExecSyncRequest) => {
      const c = containerOf(state, req.containerId);
      if (c.state !== 'CONTAINER_RUNNING') throw rpcError('UNKNOWN', `container "${c.id}" is not running`);
      const r = state.execSync(c.id, req.cmd ?? []);
      return { stdout: Buffer.from(r.stdout ?? ''), stderr: Buffer.from(r.stderr ?? ''), exitCode: r.exitCode ?? 0 };
    },

    Exec: (req: p.ExecRequest) => {
      const c = containerOf(state, req.containerId);
      if (c.state !== 'CONTAINER_RUNNING') throw rpcError('UNKNOWN', `container "${c.id}" is not running`);
      return { url: `${state.streamingBaseUrl}/exec/${newId().slice(0, 8)}?${streamFlags(req)}` };
    },

    Attach: (req: p.AttachRequest) => {
      containerOf(state, req.containerId);
      return { url: `${state.streamingBaseUrl}/attach/${newId().slice(0, 8)}?${streamFlags(req)}` };
    },

    PortForward: (req: p.PortForwardRequest) => {
      sandboxOf(state, req.podSandboxId);
      return { url: `${state.streamingBaseUrl}/portforward/${newId().slice(0, 8)}` };
    },

    ContainerStats: (req: p.ContainerStatsRequest) => ({ stats: statsOf(containerOf(state, req.containerId)) }),

    ListContainerStats: (req: p.ListContainerStatsRequest) => {
      const f = req.filter;
      const stats = [...state.containers.values()]
        .filter((c) => c.state === 'CONTAINER_RUNNING')
        .filter((c) => !f?.id || c.id.startsWith(f.id))
        .filter((c) => !f?.podSandboxId || c.sandboxId.startsWith(f.podSandboxId))
        .filter((c) => labelsMatch(c.config.labels, f?.labelSelector))
        .map(statsOf);
      return { stats };
    },

    PodSandboxStats: (req: p.PodSandboxStatsRequest) => ({ stats: podStats(state, sandboxOf(state, req.podSandboxId)) }),

    ListPodSandboxStats: (req: p.ListPodSandboxStatsRequest) => {
      const f = req.filter;
      const stats = [...state.sandboxes.values()]
        .filter((sb) => sb.state === 'SANDBOX_READY')
        .filter((sb) => !f?.id || sb.id.startsWith(f.id))
        .filter((sb) => labelsMatch(sb.config.labels, f?.labelSelector))
        .map((sb) => podStats(state, sb));
      return { stats };
    },

    UpdateRuntimeConfig: (req: p.UpdateRuntimeConfigRequest) => {
      state.podCidr = req.runtimeConfig?.networkConfig?.podCidr ?? '';
      return {};
    },

    Status: (req: p.StatusRequest) => ({
      status: { conditions: [...state.conditions].map(([type, c]) => ({ type, ...c })) },
      info: req.verbose ? { config: JSON.stringify({ fake: true, podCidr: state.podCidr }) } : {},
    }),

    CheckpointContainer: () => {
      throw rpcError('UNIMPLEMENTED', 'method CheckpointContainer not implemented');
    },
    ListMetricDescriptors: () => {
      throw rpcError('UNIMPLEMENTED', 'method ListMetricDescriptors not implemented');
    },
    ListPodSandboxMetrics: () => {
      throw rpcError('UNIMPLEMENTED', 'method ListPodSandboxMetrics not implemented');
    },
  };
}

function podStats(state: FakeRuntimeService, sb: FakeSandbox): p.PodSandboxStats {
  const containers = [...state.containers.values()].filter((c) => c.sandboxId === sb.id && c.state === 'CONTAINER_RUNNING').map(statsOf);
  const ts = nowNs().toString();
  let cpu = 0n;
  let mem = 0n;
  for (const c of containers) {
    cpu += BigInt(String(c.cpu?.usageCoreNanoSeconds?.value ?? 0));
    mem += BigInt(String(c.memory?.workingSetBytes?.value ?? 0));
  }
  return {
    attributes: { id: sb.id, metadata: sb.config.metadata ?? null, labels: sb.config.labels ?? {}, annotations: sb.config.annotations ?? {} },
    linux: {
      cpu: { timestamp: ts, usageCoreNanoSeconds: { value: cpu.toString() }, usageNanoCores: { value: '0' } },
      memory: { timestamp: ts, workingSetBytes: { value: mem.toString() } },
      containers,
    },
  };
}

/** The fake's URLs carry the request's stream flags (containerd keeps them with the token) for FakeStreamingServer. */
function streamFlags(req: { stdin?: boolean; stdout?: boolean; stderr?: boolean; tty?: boolean }): string {
  return new URLSearchParams({ stdin: String(!!req.stdin), stdout: String(!!req.stdout), stderr: String(!!req.stderr), tty: String(!!req.tty) }).toString();
}
