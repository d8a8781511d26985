import { CniError, listNetworkConfigs, loadNetworkConfig, type CniEngine, type ConfigFileEntry } from '@nodelet/cni';
import { stat } from 'node:fs/promises';
import type { CniFlags } from './options.js';

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n') + '\n';
}

/** `nodelet cni ls`: networks in the conf dir (or the one file) and every cached attachment. */
export async function listCommand(flags: CniFlags, engine: CniEngine): Promise<void> {
  const isDir = await stat(flags.confDir).then((s) => s.isDirectory(), () => false);
  const entries: ConfigFileEntry[] = isDir
    ? await listNetworkConfigs(flags.confDir)
    : await loadNetworkConfig(flags.confDir).then(
        (list) => [{ file: flags.confDir, list }],
        (error: unknown) => [{ file: flags.confDir, error: error instanceof CniError ? error : new CniError({ cniCode: 7, msg: String(error) }) }],
      );
  const networks = entries.map((e) => ({
    file: e.file,
    name: e.list?.name,
    cniVersion: e.list?.cniVersion,
    plugins: e.list?.plugins.map((p) => p.type),
    error: e.error ? (e.error.details ?? e.error.message) : undefined,
  }));
  const attachments = (await engine.cachedAttachments()).map((a) => ({
    network: a.networkName,
    containerID: a.containerID,
    ifName: a.ifName,
    netns: a.netns,
    ips: ((a.result?.ips as Array<{ address: string }> | undefined) ?? []).map((i) => i.address),
  }));
  if (flags.output === 'json') {
    process.stdout.write(`${JSON.stringify({ networks, attachments }, null, 2)}\n`);
    return;
  }
  process.stdout.write(`NETWORKS (${flags.confDir})\n`);
  process.stdout.write(table([['FILE', 'NAME', 'VERSION', 'PLUGINS / ERROR'], ...networks.map((n) => [n.file, n.name ?? '-', n.cniVersion ?? '-', n.error ? `invalid: ${n.error}` : n.plugins!.join(',')])]));
  process.stdout.write(`\nATTACHMENTS (${engine.cache.dir})\n`);
  process.stdout.write(table([['NETWORK', 'CONTAINER', 'IFNAME', 'IPS', 'NETNS'], ...attachments.map((a) => [a.network, a.containerID, a.ifName, a.ips.join(',') || '-', a.netns ?? '-'])]));
}
