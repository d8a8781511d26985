/**
 * `nodelet proxy`: the service proxy without the rest of the agent (a node whose pods another
 * agent runs, or a host that only needs Service IPs), plus `nodelet proxy rules` (print the live
 * table) and `nodelet proxy cleanup` (delete it). Composition root like main.ts: flags, config,
 * pino, signals. See docs/services.md.
 */
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import { Command, Help } from 'commander';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describeError, hasCode, type Logger } from '@nodelet/base';
import { ApiClient, loadKubeconfig } from '@nodelet/api/agent';
import { parseConfigFile } from './config/config.js';
import { PROXY_TABLE, Nft, commandRunner, deleteProxyTable, resolveProxyConfig, startServiceProxy, type ProxyFlags } from './proxy/index.js';
import { untilTerminated } from '@nodelet/systemd';

interface RunFlags extends ProxyFlags {
  config?: string;
  kubeconfig?: string;
  nodeName?: string;
  metricsBindAddress: string;
  logLevel: string;
}

function fail(msg: string, code = 1): void {
  process.stderr.write(`nodelet proxy: ${msg}\n`);
  process.exitCode = code;
}

async function rules(): Promise<void> {
  try {
    process.stdout.write(await new Nft(commandRunner()).listText(PROXY_TABLE, AbortSignal.timeout(30_000)));
  } catch (err) {
    fail(hasCode(err, 'ERR_NOT_FOUND') ? `no table "ip ${PROXY_TABLE}": is the agent (or \`nodelet proxy\`) running with proxy mode nftables?` : describeError(err));
  }
}

async function cleanup(): Promise<void> {
  try {
    await deleteProxyTable({ signal: AbortSignal.timeout(30_000) });
    process.stdout.write(`deleted table ip ${PROXY_TABLE}\n`);
  } catch (err) {
    fail(describeError(err));
  }
}

async function run(o: RunFlags): Promise<void> {
  const root = pino({ level: o.logLevel, base: { component: 'proxy' } });
  const log = root as unknown as Logger;
  let config;
  try {
    const file = o.config ? parseConfigFile(await readFile(o.config, 'utf8'), o.config) : {};
    config = resolveProxyConfig(file.proxy, o);
  } catch (err) {
    return fail(describeError(err), 2);
  }
  if (config.mode === 'iptables') return fail('proxy mode "iptables" is not implemented; use nftables (the default)', 2);
  let api: ApiClient;
  try {
    api = new ApiClient({ ...(await loadKubeconfig(o.kubeconfig)), protobuf: true });
  } catch (err) {
    return fail(`cannot load kubeconfig${o.kubeconfig ? ` ${o.kubeconfig}` : ''}: ${describeError(err)}`, 2);
  }
  const registry = new Registry();
  const nodeName = (o.nodeName ?? os.hostname()).toLowerCase();
  let proxy;
  try {
    proxy = await startServiceProxy({ api, nodeName, config, log, registry });
  } catch (err) {
    api.close();
    return fail(describeError(err));
  }
  if (!proxy) {
    api.close();
    return fail('proxy mode none: nothing to run', 2);
  }
  // kube-proxy's metrics endpoint (127.0.0.1:10249 by default), with /healthz.
  const [host, port] = splitHostPort(o.metricsBindAddress);
  const server = http.createServer((req, res) => {
    if (req.url === '/metrics') {
      void registry.metrics().then((body) => res.writeHead(200, { 'content-type': registry.contentType }).end(body), () => res.writeHead(500).end());
    } else if (req.url === '/healthz') res.end('ok');
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  process.on('unhandledRejection', (err) => {
    root.fatal({ err: describeError(err) }, 'Unhandled rejection');
    process.exit(1);
  });
  log.info({ node: nodeName, table: PROXY_TABLE, metrics: o.metricsBindAddress }, 'Service proxy started');
  await untilTerminated(log);
  server.close();
  await proxy.close();
  api.close();
}

function splitHostPort(v: string): [string, number] {
  const i = v.lastIndexOf(':');
  return [v.slice(0, i) || '127.0.0.1', Number(v.slice(i + 1))];
}

export async function main(argv: string[]): Promise<void> {
  const cmd = new Command('proxy')
    // bin/nodelet routes `nodelet <this>` here: the help's usage line names the whole command.
    .configureHelp({ commandUsage: (c) => `nodelet ${new Help().commandUsage(c)}` })
    .description('run the service proxy alone (nftables table "ip nodelet-proxy"; see docs/services.md)')
    .option('--kubeconfig <file>', 'kubeconfig to reach the API server')
    .option('--node-name <name>', 'this node (for Local traffic policies and node addresses; default: hostname)')
    .option('--config <file>', "an agent config file; its `proxy:` section is used")
    .option('--proxy-mode <mode>', 'nftables (default), iptables (not implemented) or none')
    .option('--service-cidr <cidr>', "the API server's service IP range (default 10.96.0.0/16)")
    .option('--cluster-cidr <cidr>', 'the pod network (default 10.244.0.0/16)')
    .option('--nodeport-addresses <cidrs>', 'comma-separated CIDRs whose node addresses accept NodePorts (default: all)')
    .option('--metrics-bind-address <host:port>', 'where /metrics and /healthz listen', '127.0.0.1:10249')
    .option('--log-level <level>', 'trace|debug|info|warn|error', 'info')
    .action((o: RunFlags) => run(o));
  cmd.command('rules').description('print the live table (nft list table ip nodelet-proxy)').action(rules);
  cmd.command('cleanup').description('delete the table (what the agent keeps across restarts)').action(cleanup);
  await cmd.parseAsync(argv[0] === 'proxy' ? argv.slice(1) : argv, { from: 'user' });
}
