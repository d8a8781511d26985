/**
 * The two-node lab the workload and drain suites share: `labUp` for node 1 (with the server) and
 * `labAddNode` for node 2 on the same machine, each with its own state dir, bridge and ports.
 * With `routed`, node 2 is a machine of its own behind a router namespace (labAddNode
 * `behindRouter`, docs/multi-node-lab.md). Teardown goes node 2 first (its agent still serves CNI
 * DEL for its sandboxes), then node 1 and the server; a state dir is removed only after what is
 * still mounted under it is unmounted. Below: what the network tests read of a node's namespace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { labAddNode, labDown, labRemoveNode, labUp, nodeNetworkHostAddress, type LabNode, type LabUpResult } from '@nodelet/cli';
import { unmountUnder } from '@nodelet/lab-runtime';
import { freePort } from '@nodelet/base/testing';

type LabOptions = Parameters<typeof labUp>[0];
type NodeOptions = Parameters<typeof labAddNode>[0];

export interface TwoNodeLabOptions {
  /** Short tag for temp dirs and bridges: bridges are `nle-<tag>0` and `nle-<tag>1`. */
  tag: string;
  clusterCidr: string;
  nodeNames: [string, string];
  serverArgs?: string[];
  /**
   * Node 2 in its own network namespace on subnet `subnet`, behind a router namespace on node
   * network `network` (bridge `nle-<tag>n`), where node 1, the server and the registry are; its
   * agent with pod network backend `podNetwork` (default the lab's).
   */
  routed?: { network: string; subnet: string; podNetwork?: NodeOptions['podNetwork'] };
}

export interface TwoNodeLab {
  up: LabUpResult;
  /** Node 1's state dir (holds the server and its admin kubeconfig) and node 2's. */
  dir1: string;
  dir2: string;
  node2: LabNode;
  /** Stops both nodes and the server and removes their state; logs problems, never throws. */
  teardown(): Promise<void>;
}

export async function startTwoNodeLab(o: TwoNodeLabOptions): Promise<TwoNodeLab> {
  const dir1 = mkdtempSync(join(tmpdir(), `nodelet-e2e-${o.tag}-1-`));
  const dir2 = mkdtempSync(join(tmpdir(), `nodelet-e2e-${o.tag}-2-`));
  const [apiPort, regPort, api1, hz1, api2, hz2] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const nodeNetwork = o.routed ? { bridge: `nle-${o.tag}n`, cidr: o.routed.network } : undefined;
  const registry = `${nodeNetwork ? nodeNetworkHostAddress(nodeNetwork.cidr) : '127.0.0.1'}:${regPort}`;
  const lab: LabOptions = {
    stateDir: dir1, apiPort, registry, clusterCidr: o.clusterCidr, bridge: `nle-${o.tag}0`, nodeName: o.nodeNames[0],
    nodeApiPort: api1, healthzPort: hz1, ...(o.serverArgs ? { serverArgs: o.serverArgs } : {}), ...(nodeNetwork ? { nodeNetwork } : {}),
  };
  const node2: NodeOptions = {
    stateDir: dir2, adminKubeconfig: join(dir1, 'server', 'admin.kubeconfig'), registry, nodeName: o.nodeNames[1],
    bridge: `nle-${o.tag}1`, nodeApiPort: api2, healthzPort: hz2, clusterCidr: o.clusterCidr,
    ...(o.routed ? { netns: true, behindRouter: o.routed.subnet, ...(o.routed.podNetwork ? { podNetwork: o.routed.podNetwork } : {}) } : {}),
  };
  const teardown = async (): Promise<void> => {
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['node 2', async () => (await labRemoveNode(node2, { keepState: true })).problems],
      ['node 2 state', async () => (await unmountUnder(dir2), rmSync(dir2, { recursive: true, force: true }))],
      ['node 1', async () => (await labDown({ ...lab, keepState: true })).problems],
      ['node 1 state', async () => (await unmountUnder(dir1), rmSync(dir1, { recursive: true, force: true }))],
    ];
    for (const [what, step] of steps) {
      try {
        const problems = await step();
        if (Array.isArray(problems) && problems.length) console.error(`${what} cleanup: ${problems.join('; ')}`);
      } catch (err) {
        console.error(`${what} cleanup failed: ${String(err)}`);
      }
    }
  };
  try {
    const up = await labUp(lab);
    return { up, dir1, dir2, node2: await labAddNode(node2), teardown };
  } catch (err) {
    await teardown();
    throw err;
  }
}

/** The agents' pod routes (protocol 150) of the host or of `netns`, as `[dst, via]`, or with `dev` `[dst, via, dev]`. */
export function agentRoutes(netns?: string, o: { dev?: boolean } = {}): string[][] {
  const r = spawnSync('ip', [...(netns ? ['-n', netns] : []), '-json', '-4', 'route', 'show', 'proto', '150'], { encoding: 'utf8' });
  return (JSON.parse(r.stdout || '[]') as Array<{ dst: string; gateway: string; dev: string }>).map((x) => [x.dst, x.gateway, ...(o.dev ? [x.dev] : [])]);
}

/** An HTTP GET from inside a pod printing only the body (busybox wget crashes in the lab image; nc does not). */
export const GET = (host: string, port: number): string => `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${host} ${port} | tail -n 1`;

