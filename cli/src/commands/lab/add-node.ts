/**
 * A further node of a lab cluster on the same machine (multi-node tests): its own lab containerd
 * (root, state, socket), CNI dirs, bridge, node API/healthz ports and agent, all under its own
 * state dir, joined to the server `labUp` started with a fresh bootstrap token. The node shares
 * the host network namespace with the first node; distinct bridges and the per-node pod CIDRs the
 * IPAM controller hands out keep the pod networks apart.
 *
 *   add:    containerd (lab runtime) ─▶ startLabAgent (token, join, agent, Ready)
 *   remove: labDown on the node's state dir (CRI removal of sandboxes while the agent serves
 *           CNI DEL ─▶ agent ─▶ containerd ─▶ bridge ─▶ state); there is no server to stop.
 */
import { mkdirSync } from 'node:fs';
import { ApiClient, loadKubeconfig } from '@nodelet/api';
import { labRuntimeUp } from '@nodelet/lab-runtime';
import { defaultLabOptions, labDown, labPaths, startLabAgent, type LabDownResult, type LabOptions } from './cluster.js';

export interface LabNodeOptions {
  /** The node's own state dir (not the first node's). */
  stateDir: string;
  /** The admin kubeconfig `labUp` returned. */
  adminKubeconfig: string;
  /** `host:port` of the server's registry (containerd pulls the pause and busybox images there). */
  registry: string;
  nodeName: string;
  bridge: string;
  nodeApiPort: number;
  healthzPort: number;
  readyTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface LabNode {
  nodeName: string;
  runtimeEndpoint: string;
  /** The options to pass to `labRemoveNode`. */
  options: LabNodeOptions;
}

function asLabOptions(n: LabNodeOptions): LabOptions {
  return defaultLabOptions({
    stateDir: n.stateDir, registry: n.registry, nodeName: n.nodeName, bridge: n.bridge,
    nodeApiPort: n.nodeApiPort, healthzPort: n.healthzPort, readyTimeoutMs: n.readyTimeoutMs, log: n.log,
    // One service proxy per network namespace: the first node's serves the host they share.
    proxyMode: 'none',
  });
}

export async function labAddNode(n: LabNodeOptions): Promise<LabNode> {
  const o = asLabOptions(n);
  const p = labPaths(o.stateDir);
  mkdirSync(o.stateDir, { recursive: true, mode: 0o700 });
  for (const d of [p.cniBin, p.cniConf, p.cniCache, p.ipam, p.agentRoot]) mkdirSync(d, { recursive: true });
  const admin = new ApiClient({ ...(await loadKubeconfig(n.adminKubeconfig)), timeoutMs: 10_000 });
  try {
    o.log?.(`starting containerd for node "${o.nodeName}"…`);
    const rt = await labRuntimeUp({ dir: p.containerd, registry: o.registry, cniBinDir: p.cniBin, cniConfDir: p.cniConf });
    await startLabAgent(o, n.adminKubeconfig, admin, rt.endpoint);
    return { nodeName: o.nodeName, runtimeEndpoint: rt.endpoint, options: n };
  } catch (err) {
    await labRemoveNode(n, { keepState: true }).catch(() => undefined);
    throw err;
  } finally {
    admin.close();
  }
}

/** Stops the node's agent and containerd, deletes its bridge and (unless keepState) its state dir. */
export function labRemoveNode(n: LabNodeOptions, o: { keepState?: boolean } = {}): Promise<LabDownResult> {
  return labDown({ ...asLabOptions(n), keepState: o.keepState });
}
