/**
 * `nodelet agent`: the composition root. Parses flags, loads and validates the configuration
 * (refusing to start on any invalid field), creates the root logger, starts the Agent, tells
 * systemd when it is ready, and shuts down on SIGTERM/SIGINT. An unhandled rejection is logged
 * and the agent keeps running; an uncaught exception is logged and the process exits 1
 * (crash-only: systemd restarts us and recovery is stateless). The handlers say why.
 */
// First: the agent's run-time V8 flags apply before the modules below are evaluated and run.
import './v8-flags.js';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import { Command, Help, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import { describeError, hasCode, type Logger } from '@nodelet/base';
import { ApiClient, defaultKubeconfigPath, loadKubeconfig } from '@nodelet/api/agent';
import { createNotifier, untilTerminated } from '@nodelet/systemd';
import { parseConfigFile, resolveConfig, unknownConfigKeys, type AgentConfig, type AgentFlags, type KubeletConfigurationFile } from './config/config.js';
import { Agent } from './agent.js';

function port(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('must be a port number');
  return n;
}

function count(v: string): number {
  const n = Number(v);
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a whole number');
  return n;
}

function command(): Command {
  return new Command('agent')
    // bin/nodelet routes `nodelet <this>` here: the help's usage line names the whole command.
    .configureHelp({ commandUsage: (c) => `nodelet ${new Help().commandUsage(c)}` })
    .description('run the node agent: register this node, run its pods through CRI and CNI, report status')
    .option('--config <file>', 'KubeletConfiguration-style YAML file')
    .option('--kubeconfig <file>', 'kubeconfig to reach the API server')
    .option('--api-servers <urls>', 'comma-separated API server URLs to fail over between (HA; default: the kubeconfig)')
    .option('--node-name <name>', 'name of this node (default: hostname)')
    .option('--node-ip <ip>', 'InternalIP to report (default: first non-loopback IPv4)')
    .option('--container-runtime-endpoint <endpoint>', 'CRI socket, e.g. unix:///run/containerd/containerd.sock')
    .option('--cni-bin-dir <dir>', "the runtime's CNI bin_dir (nodelet-cni is installed there)")
    .option('--cni-conf-dir <dir>', "the runtime's CNI conf_dir (the nodelet conflist is written there)")
    .option('--root-dir <dir>', 'agent state: pod volumes, serving certificate (default /var/lib/nodelet)')
    .option('--pod-manifest-path <dir>', 'directory of static pod manifests')
    .option('--pod-cidr <cidr>', "this node's pod CIDR when the control plane does not assign one")
    .option('--port <port>', 'node API port (default 10250)', port)
    .option('--healthz-port <port>', 'healthz port on 127.0.0.1 (default 10248)', port)
    .option('--container-log-max-size <quantity>', 'rotate a container log at this size (default 10Mi)')
    .option('--container-log-max-files <n>', 'log files kept per container, at least 2 (default 5)', count)
    .option('--proxy-mode <mode>', 'service proxy: nftables (default), iptables (not implemented) or none')
    .option('--service-cidr <cidr>', "the API server's service IP range (default 10.96.0.0/16)")
    .option('--cluster-cidr <cidr>', 'the pod network; Service traffic from outside it is masqueraded (default 10.244.0.0/16)')
    .option('--pod-network <backend>', 'routes to other nodes\' pods: host-gw (default; VXLAN to a node on no connected subnet), vxlan or none')
    .option('--nodeport-addresses <cidrs>', 'comma-separated CIDRs whose node addresses accept NodePorts (default: all)')
    .option('--cluster-dns <ips>', 'comma-separated nameservers of ClusterFirst pods (default 10.96.0.10)')
    .option('--cluster-domain <domain>', 'cluster DNS domain (default cluster.local)')
    .option('--resolv-conf <file>', "the node's resolv.conf: Default pods and the resolver's upstreams ('' = none)")
    .option('--tracing-endpoint <url>', 'OTLP/HTTP collector for pod journey spans, e.g. http://127.0.0.1:4318 (default: none, spans stay in memory)')
    .option('--log-level <level>', 'trace|debug|info|warn|error', 'info');
}

/** Reads and validates everything; throws ERR_INVALID_ARGUMENT naming the field. */
export async function loadAgentConfig(flags: AgentFlags, log?: Logger): Promise<AgentConfig> {
  let file: KubeletConfigurationFile = {};
  if (flags.config) {
    let text: string;
    try {
      text = await readFile(flags.config, 'utf8');
    } catch (err) {
      throw new Error(`cannot read --config ${flags.config}: ${describeError(err)}`);
    }
    file = parseConfigFile(text, flags.config);
    const unknown = unknownConfigKeys(file);
    if (unknown.length) log?.warn({ config: flags.config, unknownFields: unknown }, 'Config file has unknown fields; they are ignored (strict decoding failed, lenient decoding used)');
  }
  return resolveConfig(file, flags, os.hostname());
}

export async function main(argv: string[]): Promise<void> {
  const cmd = command();
  cmd.parse(argv[0] === 'agent' ? argv.slice(1) : argv, { from: 'user' });
  const opts = cmd.opts<AgentFlags & { logLevel: string }>();
  const root = pino({ level: opts.logLevel, base: { component: 'agent' } });
  const log = root as unknown as Logger;
  let config: AgentConfig;
  try {
    config = await loadAgentConfig(opts, log);
  } catch (err) {
    process.stderr.write(`nodelet agent: ${describeError(err)}\n`);
    process.exitCode = 2;
    return;
  }
  // A promise nobody awaited failed: the code that produced it has already unwound, so the
  // agent's state is as consistent as after any handled error. Log it and keep running pods; an
  // exit would interrupt every pod worker, probe and exec session for one lost error.
  process.on('unhandledRejection', (err) => {
    root.error({ err: describeError(err) }, 'Unhandled rejection');
  });
  // A synchronous throw that reached the event loop may have stopped a state change half-way,
  // and Node documents the process as unsafe to resume after it. The agent is crash-only (it
  // rebuilds from CRI and the API server; systemd restarts it), so log and exit. The node API's
  // request edges are guarded (server/node-api.ts) so that no request can get here.
  process.on('uncaughtException', (err) => {
    root.fatal({ err: describeError(err) }, 'Uncaught exception; exiting');
    process.exit(1);
  });
  let api: ApiClient;
  const kubeconfigPath = config.kubeconfig ?? defaultKubeconfigPath();
  try {
    const kc = await loadKubeconfig(kubeconfigPath);
    // --api-servers / apiServers list more servers of the same cluster (docs/ha.md "Agent fail-over");
    // lists and watches in protobuf, as kubelet asks (JSON for kinds the server has no table for).
    api = new ApiClient({ ...kc, servers: config.apiServers ?? kc.servers, logger: log, protobuf: true });
  } catch (err) {
    process.stderr.write(`nodelet agent: cannot load kubeconfig${config.kubeconfig ? ` ${config.kubeconfig}` : ''}: ${describeError(err)}\n`);
    process.exitCode = 2;
    return;
  }
  const notifier = createNotifier({ logger: log });
  let agent: Agent;
  try {
    agent = await Agent.start({ config, api, log, kubeconfigPath });
  } catch (err) {
    root.error({ err: describeError(err), code: hasCode(err, 'ERR_UNAVAILABLE') ? 'ERR_UNAVAILABLE' : undefined }, 'Agent failed to start');
    process.stderr.write(`nodelet agent: ${describeError(err)}\n`);
    process.exitCode = 1;
    api.close();
    // What a half-started agent opened (runtime connection, CNI socket) may keep the process
    // alive, and a supervisor (systemd, `nodelet lab add-node`) waits for it to exit: end it
    // after a second if nothing else does (unref: an agent that ends sooner is not held).
    setTimeout(() => process.exit(1), 1_000).unref();
    return;
  }
  // READY=1 means serving: Agent.start has done the CRI handshake and the node API listens; the Node
  // registers in the background with backoff, so wait for it (TimeoutStartSec= bounds this wait).
  await notifier.status(`registering node ${config.nodeName}`);
  await agent.node.registered();
  await notifier.ready(`node ${config.nodeName} serving on :${agent.nodeApiPort}`);
  const stopWatchdog = notifier.startWatchdog(() => agent.pleg.healthy());
  await untilTerminated(root);
  stopWatchdog();
  await notifier.stopping();
  await agent.close();
  api.close();
}
