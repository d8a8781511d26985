/**
 * The two-node lab the workload and drain suites share: `labUp` for node 1 (with the server) and
 * `labAddNode` for node 2 on the same machine, each with its own state dir, bridge and ports.
 * Teardown goes node 2 first (its agent still serves CNI DEL for its sandboxes), then node 1 and
 * the server; a state dir is removed only after what is still mounted under it is unmounted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labAddNode, labDown, labRemoveNode, labUp, type LabUpResult } from '@nodelet/cli';
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
}

export interface TwoNodeLab {
  up: LabUpResult;
  /** Node 1's state dir (holds the server and its admin kubeconfig) and node 2's. */
  dir1: string;
  dir2: string;
  /** Stops both nodes and the server and removes their state; logs problems, never throws. */
  teardown(): Promise<void>;
}

export async function startTwoNodeLab(o: TwoNodeLabOptions): Promise<TwoNodeLab> {
  const dir1 = mkdtempSync(join(tmpdir(), `nodelet-e2e-${o.tag}-1-`));
  const dir2 = mkdtempSync(join(tmpdir(), `nodelet-e2e-${o.tag}-2-`));
  const [apiPort, regPort, api1, hz1, api2, hz2] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort(), freePort()]);
  const registry = `127.0.0.1:${regPort}`;
  const lab: LabOptions = {
    stateDir: dir1, apiPort, registry, clusterCidr: o.clusterCidr, bridge: `nle-${o.tag}0`, nodeName: o.nodeNames[0],
    nodeApiPort: api1, healthzPort: hz1, ...(o.serverArgs ? { serverArgs: o.serverArgs } : {}),
  };
  const node2: NodeOptions = {
    stateDir: dir2, adminKubeconfig: join(dir1, 'server', 'admin.kubeconfig'), registry, nodeName: o.nodeNames[1],
    bridge: `nle-${o.tag}1`, nodeApiPort: api2, healthzPort: hz2,
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
    await labAddNode(node2);
    return { up, dir1, dir2, teardown };
  } catch (err) {
    await teardown();
    throw err;
  }
}
