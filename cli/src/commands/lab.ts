/**
 * `nodelet lab up|down|status`: the one-machine lab cluster (what `make up` / `make down` run).
 * The work is in ./lab/cluster.ts; this file parses flags and prints the next steps.
 */
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { defaultLabOptions, labDown, labPaths, labUp, type LabOptions } from './lab/cluster.js';
import { labAddNode, labRemoveNode, type LabNodeOptions } from './lab/add-node.js';
import { runningPid } from './lab/processes.js';
import { DEFAULT_IMAGE_STORE } from '@nodelet/oci';
import { DEFAULT_LAB_STATE_DIR, DEFAULT_REGISTRY, labLayout, labRuntimeStatus } from '@nodelet/lab-runtime';

const DEFAULT_NODE_NETWORK_BRIDGE = 'nodelet-nodes';

/** The flags a whole lab and one added node share: the cluster's pod network and the agent's ports. */
const POD_NETWORK_HELP = 'the agent\'s pod network backend, host-gw or vxlan (default: the agent\'s, host-gw, which reaches peers on no connected subnet over VXLAN)';

function agentFlags(c: Command, added = false): Command {
  // An added node shares the machine with the first node: its ports default to free ones, not 10250/10248.
  return c
    .option('--cluster-cidr <cidr>', 'pod network of the cluster', '10.244.0.0/16')
    .option('--node-api-port <port>', `agent node API port${added ? ' (default: a free one)' : ''}`, (v) => Number(v), ...(added ? [] : [10250]))
    .option('--healthz-port <port>', `agent healthz port${added ? ' (default: a free one)' : ''}`, (v) => Number(v), ...(added ? [] : [10248]));
}

function labFlags(c: Command): Command {
  return agentFlags(c)
    .option('--state-dir <dir>', 'where the lab keeps everything', DEFAULT_LAB_STATE_DIR)
    .option('--api-port <port>', 'API server port', (v) => Number(v), 6443)
    .option('--registry <host:port>', `image registry address (default ${DEFAULT_REGISTRY}, with --node-network <host address>:5000)`)
    .option('--node-name <name>', 'node name (default: hostname)')
    .option('--bridge <name>', 'pod bridge', 'nodelet0')
    .option('--node-network <cidr>', 'a node network (e.g. 10.230.0.0/24) for nodes in their own network namespace (lab add-node --netns): the server, registry and this node use its first address')
    .option('--node-network-bridge <name>', 'the node network\'s host bridge', DEFAULT_NODE_NETWORK_BRIDGE);
}

function toOptions(f: Record<string, unknown>): Partial<LabOptions> {
  return {
    stateDir: f.stateDir as string, apiPort: f.apiPort as number, registry: f.registry as string,
    clusterCidr: f.clusterCidr as string, nodeName: f.nodeName as string | undefined, bridge: f.bridge as string,
    nodeApiPort: f.nodeApiPort as number, healthzPort: f.healthzPort as number,
    ...(f.nodeNetwork ? { nodeNetwork: { cidr: f.nodeNetwork as string, bridge: f.nodeNetworkBridge as string } } : {}),
    ...(f.podNetwork ? { podNetwork: f.podNetwork as LabOptions['podNetwork'] } : {}),
  };
}

function nodeFlags(c: Command): Command {
  return agentFlags(c, true)
    .requiredOption('--state-dir <dir>', 'the node\'s own state dir (not the lab\'s)')
    .requiredOption('--node-name <name>', 'node name')
    .requiredOption('--bridge <name>', 'the node\'s pod bridge')
    .option('--admin-kubeconfig <file>', 'the lab\'s admin kubeconfig', labLayout().adminKubeconfig)
    .option('--registry <host:port>', 'the lab\'s image registry (default: port 5000 on the API server\'s address)')
    .option('--netns', 'run the node in its own network namespace on the lab\'s node network (lab up --node-network)')
    .option('--node-ip <ip>', 'with --netns: the node\'s address on the node network, or on its subnet with --behind-router (default: the lowest free one)');
}

/** add-node's own flags (remove-node finds the router from the namespace). */
function addNodeFlags(c: Command): Command {
  return nodeFlags(c)
    .option('--behind-router <cidr>', 'with --netns: put the node on a subnet of its own (e.g. 10.231.0.0/29) behind a router namespace on the node network; its pods are reached over VXLAN')
    .option('--pod-network <backend>', `with --netns: ${POD_NETWORK_HELP}`);
}

function toNodeOptions(f: Record<string, unknown>): LabNodeOptions {
  return {
    stateDir: f.stateDir as string, nodeName: f.nodeName as string, bridge: f.bridge as string, adminKubeconfig: f.adminKubeconfig as string,
    ...(f.registry ? { registry: f.registry as string } : {}), clusterCidr: f.clusterCidr as string,
    ...(f.nodeApiPort !== undefined ? { nodeApiPort: f.nodeApiPort as number } : {}), ...(f.healthzPort !== undefined ? { healthzPort: f.healthzPort as number } : {}),
    ...(f.netns ? { netns: true } : {}), ...(f.nodeIp ? { nodeIp: f.nodeIp as string } : {}),
    ...(f.behindRouter ? { behindRouter: f.behindRouter as string } : {}),
    ...(f.podNetwork ? { podNetwork: f.podNetwork as LabOptions['podNetwork'] } : {}),
    log: (l) => process.stdout.write(`  ${l}\n`),
  };
}

export function register(program: Command): void {
  const lab = program.command('lab').description('a one-node lab cluster on this machine (make up / make down)');

  labFlags(lab.command('up').description('start containerd, nodelet server and nodelet agent; wait until the node is Ready'))
    // One default store: the lab registry serves the store `nodelet image import|build` write by default.
    .option('--store <dir>', 'image store the lab registry serves (the lab images are built into it)', DEFAULT_IMAGE_STORE)
    .option('--pod-network <backend>', POD_NETWORK_HELP)
    .action(async (f) => {
      const r = await labUp({ ...toOptions(f), imagesDir: f.store as string, log: (l) => process.stdout.write(`  ${l}\n`) });
      process.stdout.write(`
nodelet lab cluster is up: node "${r.nodeName}" is Ready.

  kubeconfig:  ${r.kubeconfig}
  API server:  ${r.server}
  runtime:     ${r.runtimeEndpoint}

Next:
  export KUBECONFIG=${r.kubeconfig}
  kubectl get nodes -o wide
  kubectl create deployment hello --image=${r.images.busybox} -- httpd -f -p 8080
  kubectl get pods -o wide
  kubectl logs deploy/hello
  kubectl exec deploy/hello -- wget -qO- http://127.0.0.1:8080/ || true
  kubectl scale deployment hello --replicas=5
  kubectl rollout status deployment hello
  kubectl delete deployment hello
  nodelet cri -r ${r.runtimeEndpoint} ps -a     # what the node runs, crictl-style
Stop everything with: make down
`);
    });

  labFlags(lab.command('down').description('stop the lab cluster and remove everything it created'))
    .option('--keep-state', 'keep the state dir (server data, images pulled)')
    .action(async (f) => {
      const r = await labDown({ ...toOptions(f), keepState: Boolean(f.keepState), log: (l) => process.stdout.write(`  ${l}\n`) });
      process.stdout.write(`stopped: ${r.stopped.join(', ') || 'nothing was running'}; pod sandboxes removed: ${r.removedSandboxes}\n`);
      for (const pr of r.problems) process.stdout.write(`problem: ${pr}\n`);
      if (r.problems.length) process.exitCode = 1;
    });

  addNodeFlags(lab.command('add-node').description('add a node to the lab cluster: its own containerd and agent (and with --netns its own network namespace); wait until it is Ready')).action(async (f) => {
    const r = await labAddNode(toNodeOptions(f));
    process.stdout.write(`node "${r.nodeName}" is Ready${r.netns ? ` in network namespace ${r.netns} at ${r.ip}` : ''}; node API :${r.options.nodeApiPort}, healthz :${r.options.healthzPort}; runtime ${r.runtimeEndpoint}\n`);
  });

  nodeFlags(lab.command('remove-node').description('stop a node added with add-node and remove everything it created'))
    .option('--keep-state', 'keep the node\'s state dir')
    .action(async (f) => {
      const r = await labRemoveNode(toNodeOptions(f), { keepState: Boolean(f.keepState) });
      process.stdout.write(`stopped: ${r.stopped.join(', ') || 'nothing was running'}; pod sandboxes removed: ${r.removedSandboxes}\n`);
      for (const pr of r.problems) process.stdout.write(`problem: ${pr}\n`);
      if (r.problems.length) process.exitCode = 1;
    });

  labFlags(lab.command('status').description('show what of the lab cluster runs')).action(async (f) => {
    const o = defaultLabOptions(toOptions(f));
    const p = labPaths(o.stateDir);
    const line = (name: string, pid: number | undefined) => `${name.padEnd(11)} ${pid ? `running (pid ${pid})` : 'stopped'}\n`;
    process.stdout.write(line('server', await runningPid(p.serverProc, o.stateDir)));
    process.stdout.write(line('agent', await runningPid(p.agentProc, o.stateDir)));
    const rt = await labRuntimeStatus({ dir: p.containerd });
    process.stdout.write(`${line('containerd', rt.pid).trimEnd()}${rt.running ? `, ${rt.criReady ? `CRI ${rt.endpoint}` : `CRI not ready: ${rt.error}`}` : ''}\n`);
    process.stdout.write(`kubeconfig  ${existsSync(p.adminKubeconfig) ? p.adminKubeconfig : '(none)'}\n`);
  });
}
