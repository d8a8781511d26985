/**
 * Operations commands: `nodelet install server|agent`, `nodelet uninstall [--purge]`.
 * and `nodelet doctor` (checks in ./doctor/). `token` and `join` register here too.
 */
import type { Command } from 'commander';
import { AgentError, describeError } from '@nodelet/base';
import { unmountUnder } from '@nodelet/lab-runtime';
import { installAgent, installServer, serverDataDir, uninstall, type InstallReport } from './ops/install.js';
import { createServerJoinToken, fetchServerJoinBundle, serverJoinFiles } from './ops/server-join.js';
import { PROXY_TABLE, removeProxyTable } from './proxy.js';
import { registerDoctor } from './doctor/command.js';
import { createToken, defaultAdminKubeconfig, listTokens, parseTtl } from './ops/token.js';
import { agentAuthentication, join as joinCluster } from './ops/join.js';
import { nodeRuntimeFiles } from './ops/node-runtime-config.js';
import { createUserKubeconfig } from './ops/kubeconfig-create.js';

function printReport(r: InstallReport): void {
  for (const f of r.files) process.stdout.write(`${f.outcome.padEnd(9)} ${f.path}\n`);
  for (const u of r.started) process.stdout.write(`started   ${u}\n`);
  if (!r.changed) process.stdout.write('nothing changed\n');
}

const commonOptions = (c: Command): Command =>
  c
    .option('--config-dir <dir>', 'configuration directory', '/etc/nodelet')
    .option('--state-dir <dir>', 'state directory', '/var/lib/nodelet')
    .option('--bin-path <path>', 'where to put the nodelet wrapper', '/usr/local/bin/nodelet')
    .option('--no-start', 'write files only; do not enable or start the units')
    .option('--watchdog-sec <n>', 'WatchdogSec= of the unit', (v) => Number(v))
    .option('--restart-sec <d>', 'RestartSec= of the unit');

/** What commonOptions parsed, as both installers take it. */
const commonValues = (o: Record<string, unknown>) => ({
  configDir: o.configDir as string,
  stateDir: o.stateDir as string,
  binPath: o.binPath as string,
  noStart: !o.start,
  watchdogSec: o.watchdogSec as number | undefined,
  restartSec: o.restartSec as string | undefined,
});

export function register(program: Command): void {
  registerDoctor(program);
  const install = program.command('install').description('install nodelet as systemd services (idempotent)');

  commonOptions(install.command('server').description('install and start nodelet-server.service'))
    .option('--port <port>', 'API server port', (v) => Number(v))
    .option('--bind-address <addr>', 'API server bind address')
    .option('--join <https://server:6443>', 'add this server to the control plane of that server (same etcd); needs --token and --ca-cert-hash')
    .option('--token <token>', 'server join token from `nodelet token create --server-join`')
    .option('--ca-cert-hash <sha256:hex>', 'CA pin printed with the token')
    .action(async (o) => {
      if (!!o.join !== !!o.token || !!o.join !== !!o.caCertHash) throw new AgentError('ERR_INVALID_ARGUMENT', '--join, --token and --ca-cert-hash go together');
      const join = o.join ? serverJoinFiles(serverDataDir(o.stateDir), await fetchServerJoinBundle({ server: o.join, token: o.token, caCertHash: o.caCertHash })) : undefined;
      printReport(installServer({ ...commonValues(o), port: o.port, bindAddress: o.bindAddress, ...(join ? { join } : {}) }));
    });

  commonOptions(install.command('agent').description('install and start nodelet-agent.service (use `nodelet join` to get a credential)'))
    .option('--kubeconfig <path>', 'the agent kubeconfig (written by `nodelet join`)')
    .option('--node-name <name>', 'node name (default: hostname)')
    .action((o) => printReport(installAgent({ ...commonValues(o), kubeconfig: o.kubeconfig, nodeName: o.nodeName })));

  program
    .command('uninstall')
    .description('stop and remove exactly what `nodelet install` wrote')
    .option('--purge', 'also remove the state and configuration directories')
    .option('--config-dir <dir>', 'configuration directory', '/etc/nodelet')
    .option('--state-dir <dir>', 'state directory', '/var/lib/nodelet')
    .action(async (o) => {
      // Pods' volumes (secret/projected tmpfs) stay mounted after the agent stops; as `kubeadm reset`
      // does, a purge unmounts them first so the state directory can go.
      if (o.purge) await unmountUnder(o.stateDir).catch((err: unknown) => process.stderr.write(`nodelet uninstall: ${describeError(err)}\n`));
      const r = uninstall({ configDir: o.configDir, stateDir: o.stateDir, purge: o.purge });
      for (const p of r.removed) process.stdout.write(`removed   ${p}\n`);
      for (const p of r.keptModified) process.stdout.write(`kept      ${p} (changed since install)\n`);
      for (const p of r.purged) process.stdout.write(`purged    ${p}\n`);
      // The agent keeps its service proxy table across restarts; uninstall takes it away.
      const t = removeProxyTable();
      if (t.removed) process.stdout.write(`removed   nftables table ip ${PROXY_TABLE}\n`);
      if (t.problem) process.stderr.write(`nodelet uninstall: ${t.problem}\n`);
    });

  program
    .command('kubeconfig')
    .description('kubeconfigs for users (run where the admin kubeconfig is)')
    .command('create')
    .description('a kubeconfig with a client certificate signed by the cluster CA (CN = user, O = groups); bind roles to use it')
    .requiredOption('--user <name>', 'the user name (certificate CN)')
    .option('--group <name>', 'a group (certificate O); repeatable', (v: string, acc: string[]) => [...acc, v], [] as string[])
    .option('--days <n>', 'certificate lifetime in days', (v) => Number(v), 365)
    .option('-o, --output <file>', 'where to write it (default ./<user>.kubeconfig)')
    .option('--kubeconfig <path>', 'admin kubeconfig ($KUBECONFIG when set)', defaultAdminKubeconfig())
    .option('--force', 'replace the output file when it exists')
    .action(async (o) => {
      const r = await createUserKubeconfig({ adminKubeconfig: o.kubeconfig, user: o.user, groups: o.group, days: o.days, out: o.output ?? `${o.user}.kubeconfig`, force: Boolean(o.force) });
      process.stdout.write(`kubeconfig for ${o.user}${o.group.length ? ` (groups ${o.group.join(', ')})` : ''} written to ${r.out} (0600, certificate from ${r.csrName})\n`);
      process.stdout.write(`grant rights with e.g.: kubectl create rolebinding ${o.user}-view --clusterrole=view --user=${o.user} -n default\n`);
    });

  const token = program.command('token').description('bootstrap tokens for `nodelet join` (run on the server)');
  token
    .command('create')
    .description('create a bootstrap token and print the join command')
    .option('--ttl <duration>', 'lifetime (30m, 24h, 7d)', '24h')
    .option('--description <text>', 'what the token is for')
    .option('--node-name <name>', 'the token joins only this node, and may re-join it if it already exists')
    .option('--server-join', 'a token that adds a server to the control plane (`nodelet install server --join`) instead of a node; it unlocks the CA key: keep the TTL short')
    .option('--kubeconfig <path>', 'admin kubeconfig ($KUBECONFIG when set)', defaultAdminKubeconfig())
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (o) => {
      if (o.serverJoin) {
        if (o.nodeName) throw new AgentError('ERR_INVALID_ARGUMENT', '--node-name is for node tokens, not --server-join');
        const s = await createServerJoinToken({ kubeconfig: o.kubeconfig, ttlMs: parseTtl(o.ttl), description: o.description });
        if (o.output === 'json') process.stdout.write(JSON.stringify(s, null, 2) + '\n');
        else process.stdout.write(`token:   ${s.token}\nexpires: ${s.expiresAt}\n\nadd a server with:\n  ${s.joinCommand}\n`);
        return;
      }
      const t = await createToken({ kubeconfig: o.kubeconfig, ttlMs: parseTtl(o.ttl), description: o.description, nodeName: o.nodeName });
      if (o.output === 'json') process.stdout.write(JSON.stringify(t, null, 2) + '\n');
      else process.stdout.write(`token:   ${t.token}\nexpires: ${t.expiresAt}\n\njoin a node with:\n  ${t.joinCommand}\n`);
    });
  token
    .command('list')
    .description('list bootstrap tokens (IDs only; secrets are never printed again)')
    .option('--kubeconfig <path>', 'admin kubeconfig ($KUBECONFIG when set)', defaultAdminKubeconfig())
    .action(async (o) => {
      const rows = await listTokens({ kubeconfig: o.kubeconfig });
      process.stdout.write(['ID       EXPIRES                DESCRIPTION', ...rows.map((r) => `${r.id.padEnd(8)} ${r.expires.padEnd(22)} ${r.description}`)].join('\n') + '\n');
    });

  commonOptions(
    program
      .command('join <server>')
      .description('join this machine to a cluster: verify the CA, get a node credential, install and start the agent')
      .requiredOption('--token <token>', 'bootstrap token from `nodelet token create`')
      .requiredOption('--ca-cert-hash <sha256:hex>', 'CA pin from `nodelet token create`'),
  )
    .option('--node-name <name>', 'node name (default: hostname)')
    .option('--registry <host:port>', "the cluster's image registry (default: <server host>:5000)")
    .option('--cni-bin-dir <dir>', "containerd's CNI bin dir", '/opt/cni/bin')
    .option('--cni-conf-dir <dir>', "containerd's CNI conf dir", '/etc/cni/net.d')
    .action(async (server: string, o) => {
      const kubeconfigPath = `${o.configDir}/agent.kubeconfig`;
      const r = await joinCluster({ server, token: o.token, caCertHash: o.caCertHash, nodeName: o.nodeName, kubeconfigPath, tokenFile: `${o.configDir}/agent.token`, caFile: `${o.configDir}/pki/ca.crt` });
      const until = r.expiresAt !== undefined ? `, expires ${new Date(r.expiresAt).toISOString()}, renewed by the agent before` : '';
      process.stdout.write(`credential for ${r.user} written to ${r.tokenFile} (0600${until})\n`);
      process.stdout.write(`kubeconfig written to ${r.kubeconfigPath} (0600)\n`);
      process.stdout.write(`cluster CA written to ${r.caFile} (the agent's client CA: the API server's logs/exec proxy authenticates with it)\n`);
      const host = new URL(/^https?:/.test(server) ? server : `https://${server}`).hostname;
      const runtime = nodeRuntimeFiles({ configDir: o.configDir, registry: o.registry ?? `${host}:5000`, cniBinDir: o.cniBinDir, cniConfDir: o.cniConfDir });
      printReport(
        installAgent({
          configDir: o.configDir, stateDir: o.stateDir, binPath: o.binPath, noStart: !o.start,
          watchdogSec: o.watchdogSec, restartSec: o.restartSec, kubeconfig: kubeconfigPath, nodeName: r.nodeName,
          containerdConfig: runtime.containerdToml, extraFiles: [runtime.hostsToml],
          agentConfig: { cniBinDir: o.cniBinDir, cniConfDir: o.cniConfDir, ...agentAuthentication(r.caFile) },
        }),
      );
    });
}
