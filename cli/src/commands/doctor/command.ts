/**
 * `nodelet doctor`: kubeadm-preflight-like checks of this node, one pass/warn/fail line each with
 * the fix; `--leaks` adds the inventory of resources no pod owns. Exit code: 0 all pass, 1 worst
 * is a warning, 2 something failed. `-o json` prints the results for machines.
 */
import type { Command } from 'commander';
import { AgentError } from '@nodelet/base';
import { existsSync, readFileSync } from 'node:fs';
import { detectNodeConfig, type DetectedConfig } from './node-config.js';
import { connectCriClient } from '@nodelet/cri-client';
import { ApiClient, loadKubeconfig, PODS } from '@nodelet/api';
import { exitCodeFor, formatResults, runChecks, summaryLine, type Check, type CheckResult } from './check.js';
import { collectInventory, formatInventory, type NodeInventory } from './inventory.js';
import { hostChecks } from './host-checks.js';
import { cniConfigCheck, cniPluginsCheck, runtimeCheck } from './node-checks.js';
import { serverChecks } from './server-checks.js';
import { leakCheck } from './leaks.js';
import { proxyCheck } from './proxy-checks.js';
import { etcdCheck } from './etcd-checks.js';

export interface DoctorOptions {
  containerRuntimeEndpoint: string;
  cniPluginDirs: string;
  cniConfDir: string;
  cniBinDir: string;
  kubeconfig?: string;
  /** The server's admin kubeconfig on a server host: adds the etcd members' health (etcd-checks.ts). */
  serverKubeconfig?: string;
  nodeName?: string;
  caCertHash?: string;
  leaks?: boolean;
  cniCacheDir: string;
  ipamDir: string;
  netnsDir: string;
  bridge?: string;
  checkPorts?: boolean;
  output?: string;
  /** Which node configuration filled the options (see ./node-config.ts); reported first. */
  detected?: DetectedConfig;
}

export async function doctor(o: DoctorOptions): Promise<CheckResult[]> {
  const node = { runtimeEndpoint: o.containerRuntimeEndpoint, pluginDirs: o.cniPluginDirs.split(':'), cniConfDir: o.cniConfDir, cniBinDir: o.cniBinDir };
  const checks: Check[] = [
    ...hostChecks({
      ports: o.checkPorts ? [{ port: 10250, host: '0.0.0.0', what: 'node API' }, { port: 10248, host: '127.0.0.1', what: 'agent healthz' }] : [],
      disks: [{ path: '/var/lib', what: 'nodefs' }],
    }),
    runtimeCheck(node),
    cniPluginsCheck(node),
    cniConfigCheck(node),
  ];
  if (o.kubeconfig) checks.push(...serverChecks({ kubeconfig: o.kubeconfig, nodeName: o.nodeName, caCertHash: o.caCertHash }));
  checks.push(proxyCheck({ kubeconfig: o.kubeconfig }));
  if (o.serverKubeconfig) checks.push(etcdCheck({ kubeconfig: o.serverKubeconfig }));
  const results = await runChecks(checks);
  if (o.detected) results.unshift({ id: 'doctor.config', level: 'pass', message: `using the ${o.detected.source} (runtime ${o.containerRuntimeEndpoint})` });
  if (o.leaks) results.push(...(await leaks(o)));
  return results;
}

async function leaks(o: DoctorOptions): Promise<CheckResult[]> {
  let conn;
  try {
    conn = await connectCriClient({ endpoint: o.containerRuntimeEndpoint, timeoutMs: 5_000 });
  } catch {
    return [{ id: 'leaks', level: 'skip', message: 'runtime unreachable: leak inventory skipped' }];
  }
  try {
    const apiPodUids = o.kubeconfig && o.nodeName ? nodePodUids(o.kubeconfig, o.nodeName) : undefined;
    return await runChecks([
      leakCheck({ cri: conn.client, cniCacheDir: o.cniCacheDir, ipamDataDir: o.ipamDir, netnsDir: o.netnsDir, bridge: o.bridge, apiPodUids }),
    ]);
  } finally {
    conn.client.close();
  }
}

/** UIDs of the pods the API server has bound to `nodeName`. */
function nodePodUids(kubeconfig: string, nodeName: string): (signal: AbortSignal) => Promise<Set<string>> {
  return async (signal) => {
    const client = new ApiClient({ ...(await loadKubeconfig(kubeconfig)), timeoutMs: 5_000 });
    try {
      const pods = await client.listAll(PODS, { fieldSelector: `spec.nodeName=${nodeName}`, signal });
      return new Set(pods.items.map((p) => p.metadata?.uid ?? ''));
    } finally {
      client.close();
    }
  };
}

/** Where `nodelet server` (default --data-dir) writes its admin kubeconfig. */
const SERVER_ADMIN_KUBECONFIG = '/var/lib/nodelet/server/admin.kubeconfig';

export function registerDoctor(program: Command): void {
  program
    .command('doctor')
    .description('check this node: runtime, CNI, kernel settings, server and credential (exit 0 pass, 1 warn, 2 fail)')
    .option('--container-runtime-endpoint <ep>', 'CRI endpoint', process.env.CONTAINER_RUNTIME_ENDPOINT ?? 'unix:///run/containerd/containerd.sock')
    .option('--cni-plugin-dirs <dirs>', 'colon-separated directories of the real CNI plugins', '/usr/lib/cni:/opt/cni/bin')
    .option('--cni-conf-dir <dir>', "the runtime's CNI conf dir", '/etc/cni/net.d')
    .option('--cni-bin-dir <dir>', "the runtime's CNI bin dir", '/opt/cni/bin')
    .option('--kubeconfig <path>', 'agent kubeconfig (default /etc/nodelet/agent.kubeconfig when present)')
    .option('--server-kubeconfig <path>', `the server's admin kubeconfig: adds each etcd member's health when the server uses etcd (default ${SERVER_ADMIN_KUBECONFIG} when present)`)
    .option('--node-name <name>', 'this node’s name (checks the credential may read it)')
    .option('--ca-cert-hash <sha256:hex>', 'expected CA pin of the server')
    .option('--leaks', 'also list sandboxes, containers, IPs, netns, veths and CNI cache entries owned by no pod')
    .option('--cni-cache-dir <dir>', 'CNI result cache root', '/var/lib/cni')
    .option('--ipam-dir <dir>', 'host-local data dir', '/var/lib/cni/networks')
    .option('--netns-dir <dir>', 'where the runtime pins network namespaces', '/var/run/netns')
    .option('--bridge <name>', 'the pod bridge (for veth leaks)', 'nodelet0')
    .option('--check-ports', 'check that the agent ports (10250, 10248) are free (before the first start)')
    .option('-o, --output <format>', 'text or json', 'text')
    .option('--no-inventory', 'leave out the node inventory (OS, CPU, memory, disks, network, virtualisation)')
    .option('--lab [dir]', 'check the node `make up` / `nodelet lab up` runs (its containerd, CNI dirs and credential; default dir /var/lib/nodelet/lab)')
    .action(async (o: DoctorOptions & { lab?: string | boolean; inventory: boolean }, cmd: Command) => {
      if (o.output !== 'text' && o.output !== 'json') throw new AgentError('ERR_INVALID_ARGUMENT', `unsupported output format "${o.output}": use text or json`);
      const explicit = new Set(cmd.options.map((x) => x.attributeName()).filter((n) => cmd.getOptionValueSource(n) === 'cli' || cmd.getOptionValueSource(n) === 'env'));
      const detected = detectNodeConfig({ lab: o.lab, explicit, fs: { exists: existsSync, read: (f) => readFileSync(f, 'utf8') } });
      if (detected) applyDetected(o, detected, explicit);
      if (!o.kubeconfig && existsSync('/etc/nodelet/agent.kubeconfig')) o.kubeconfig = '/etc/nodelet/agent.kubeconfig';
      if (!o.serverKubeconfig && existsSync(SERVER_ADMIN_KUBECONFIG)) o.serverKubeconfig = SERVER_ADMIN_KUBECONFIG;
      const inventory = o.inventory ? await inventoryOrProblem() : undefined;
      const results = await doctor(o);
      if (o.output === 'json') {
        process.stdout.write(JSON.stringify({ ...(inventory ? { inventory } : {}), results, summary: summaryLine(results), exitCode: exitCodeFor(results) }, null, 2) + '\n');
      } else {
        const head = inventory ? ('problem' in inventory ? `node inventory unavailable: ${inventory.problem}\n\n` : `${formatInventory(inventory)}\n\n`) : '';
        process.stdout.write(`${head}${formatResults(results)}\n\n${summaryLine(results)}\n`);
      }
      process.exitCode = exitCodeFor(results);
    });
}

/** The inventory is information, not a check: a failure to read it is said and the checks go on. */
async function inventoryOrProblem(): Promise<NodeInventory | { problem: string }> {
  try {
    return await collectInventory();
  } catch (err) {
    return { problem: (err as Error).message };
  }
}

/** The options the detected node configuration fills, unless the user gave them. */
const DETECTED_OPTIONS = ['containerRuntimeEndpoint', 'cniPluginDirs', 'cniConfDir', 'cniBinDir', 'cniCacheDir', 'ipamDir', 'netnsDir', 'bridge', 'kubeconfig', 'nodeName'] as const;

function applyDetected(o: DoctorOptions, detected: DetectedConfig, explicit: ReadonlySet<string>): void {
  for (const k of DETECTED_OPTIONS) {
    const v = detected.values[k];
    if (v !== undefined && !explicit.has(k)) o[k] = v;
  }
  o.detected = detected;
}
