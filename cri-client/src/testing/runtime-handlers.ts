/**
 * runtime.v1.RuntimeService handlers: the shared runtime model (`../fake-runtime/`) served over
 * gRPC, plus the answers only the gRPC fake gives (stats, streaming URLs, verbose info).
 * Each handler is a plain function (request) → reply; fake-server.ts adapts them to grpc-js.
 */
import type * as p from '@nodelet/proto';
import { labelsMatch, newId, nowNs, type FakeContainer, type FakeSandbox } from '../fake-runtime/index.js';
import { rpcError, type FakeRuntimeService } from './fake-runtime-service.js';

type Handler = (req: never) => Promise<object> | object;

/** The sandbox's pid and netns in verbose PodSandboxStatus (no process exists). */
const SANDBOX_PID = 4242;
const netnsPathOf = (id: string): string => `/var/run/netns/cni-${id.slice(0, 8)}`;

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

    RunPodSandbox: (req: p.RunPodSandboxRequest) => ({ podSandboxId: state.runPodSandbox(req.config ?? {}, req.runtimeHandler ?? '') }),

    StopPodSandbox: (req: p.StopPodSandboxRequest) => (state.stopPodSandbox(req.podSandboxId), {}),

    RemovePodSandbox: (req: p.RemovePodSandboxRequest) => (state.removePodSandbox(req.podSandboxId), {}),

    PodSandboxStatus: (req: p.PodSandboxStatusRequest) => {
      const status = state.podSandboxStatus(req.podSandboxId);
      const info: Record<string, string> = {};
      if (req.verbose) {
        info['info'] = JSON.stringify({
          pid: SANDBOX_PID,
          runtimeHandler: status.runtimeHandler,
          runtimeSpec: { linux: { namespaces: [{ type: 'pid' }, { type: 'network', path: netnsPathOf(status.id) }] } },
        });
      }
      return { status, info };
    },

    ListPodSandbox: (req: p.ListPodSandboxRequest) => ({ items: state.listPodSandbox(req.filter) }),

    CreateContainer: (req: p.CreateContainerRequest) => ({ containerId: state.createContainer(req.podSandboxId, req.config ?? {}) }),

    StartContainer: (req: p.StartContainerRequest) => (state.startContainer(req.containerId), {}),

    StopContainer: (req: p.StopContainerRequest) => (state.stopContainer(req.containerId), {}),

    RemoveContainer: (req: p.RemoveContainerRequest) => (state.removeContainer(req.containerId), {}),

    ListContainers: (req: p.ListContainersRequest) => ({ containers: state.listContainers(req.filter) }),

    ContainerStatus: (req: p.ContainerStatusRequest) => {
      const status = state.containerStatus(req.containerId);
      const c = state.container(status.id, 'ContainerStatus');
      const info: Record<string, string> = req.verbose ? { info: JSON.stringify({ sandboxID: c.sandboxId, pid: c.state === 'CONTAINER_RUNNING' ? 4343 : 0 }) } : {};
      return { status, info };
    },

    UpdateContainerResources: (req: p.UpdateContainerResourcesRequest) => {
      const c = state.container(req.containerId, 'UpdateContainerResources');
      c.config = { ...c.config, linux: { ...c.config.linux, resources: req.linux ?? null } };
      return {};
    },

    ReopenContainerLog: (req: p.ReopenContainerLogRequest) => {
      const c = state.container(req.containerId, 'ReopenContainerLog');
      if (c.state !== 'CONTAINER_RUNNING') throw rpcError('UNKNOWN', `container "${c.id}" is not running`);
      return {};
    },

    ExecSync: (req: p.ExecSyncRequest) => {
      const c = state.container(req.containerId, 'ExecSync');
      if (c.state !== 'CONTAINER_RUNNING') throw rpcError('UNKNOWN', `container "${c.id}" is not running`);
      const r = state.execSync(c.id, req.cmd ?? []);
      return { stdout: Buffer.from(r.stdout ?? ''), stderr: Buffer.from(r.stderr ?? ''), exitCode: r.exitCode ?? 0 };
    },

    Exec: (req: p.ExecRequest) => {
      const c = state.container(req.containerId, 'Exec');
      if (c.state !== 'CONTAINER_RUNNING') throw rpcError('UNKNOWN', `container "${c.id}" is not running`);
      return { url: `${state.streamingBaseUrl}/exec/${newId().slice(0, 8)}?${streamFlags(req)}` };
    },

    Attach: (req: p.AttachRequest) => {
      state.container(req.containerId, 'Attach');
      return { url: `${state.streamingBaseUrl}/attach/${newId().slice(0, 8)}?${streamFlags(req)}` };
    },

    PortForward: (req: p.PortForwardRequest) => {
      state.sandbox(req.podSandboxId, 'PortForward');
      return { url: `${state.streamingBaseUrl}/portforward/${newId().slice(0, 8)}` };
    },

    ContainerStats: (req: p.ContainerStatsRequest) => ({ stats: statsOf(state.container(req.containerId, 'ContainerStats')) }),

    ListContainerStats: (req: p.ListContainerStatsRequest) => {
      const f = req.filter;
      const stats = [...state.containers.values()].filter((c) => c.state === 'CONTAINER_RUNNING' && state.containerMatches(c, f)).map(statsOf);
      return { stats };
    },

    PodSandboxStats: (req: p.PodSandboxStatsRequest) => ({ stats: podStats(state, state.sandbox(req.podSandboxId, 'PodSandboxStats')) }),

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
