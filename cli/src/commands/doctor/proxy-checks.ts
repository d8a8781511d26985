/**
 * `nodelet doctor`'s service proxy check: the `ip nodelet-proxy` table exists, and every port of
 * every Service with an IPv4 ClusterIP is in it, either in `service-ips` (it has endpoints) or in
 * `no-endpoint-services` (it rejects), with its ClusterIP in `cluster-ips`.
 */
import { ApiClient, loadKubeconfig, SERVICES } from '@nodelet/api';
import { describeError } from '@nodelet/base';
import { isIPv4 } from 'node:net';
import type { Check, CheckResult } from './check.js';
import { PROXY_TABLE, readProxyTable } from '../proxy.js';

type Doc = NonNullable<ReturnType<typeof readProxyTable>>;

function keys(doc: Doc, kind: 'map' | 'set', name: string): Set<string> {
  const obj = doc.nftables.find((o) => (o[kind] as { name?: string } | undefined)?.name === name)?.[kind] as { elem?: unknown[] } | undefined;
  return new Set((obj?.elem ?? []).map((e) => {
    let k = (kind === 'map' ? (e as unknown[])[0] : e) as { concat?: unknown[]; elem?: { val?: unknown } } | string;
    if (typeof k === 'object' && k?.elem) k = k.elem.val as typeof k;
    return typeof k === 'object' && Array.isArray(k?.concat) ? k.concat.join(' . ') : String(k);
  }));
}

export function proxyCheck(o: { kubeconfig?: string }): Check {
  return {
    id: 'proxy.table',
    title: 'service proxy table',
    async run(signal): Promise<CheckResult> {
      let doc: Doc | undefined;
      try {
        doc = readProxyTable();
      } catch (err) {
        return { id: 'proxy.table', level: 'warn', message: `cannot run nft: ${describeError(err)}`, fix: 'apt-get install nftables (or run the agent with --proxy-mode none)' };
      }
      if (!doc) return { id: 'proxy.table', level: 'warn', message: `no nftables table "ip ${PROXY_TABLE}": Service IPs are not proxied on this node`, fix: 'start the agent (proxy mode nftables, the default) or `nodelet proxy`; with --proxy-mode none this is expected' };
      if (!o.kubeconfig) return { id: 'proxy.table', level: 'pass', message: `table "ip ${PROXY_TABLE}" exists (no --kubeconfig: not compared with the API)` };
      const client = new ApiClient({ ...(await loadKubeconfig(o.kubeconfig)), timeoutMs: 5_000 });
      let services;
      try {
        services = (await client.listAll(SERVICES, { signal })).items;
      } catch (err) {
        return { id: 'proxy.table', level: 'warn', message: `table exists; cannot list Services to compare: ${describeError(err)}` };
      } finally {
        client.close();
      }
      const served = keys(doc, 'map', 'service-ips');
      const rejected = keys(doc, 'map', 'no-endpoint-services');
      const clusterIPs = keys(doc, 'set', 'cluster-ips');
      const missing: string[] = [];
      let ports = 0;
      for (const s of services) {
        const ip = s.spec?.clusterIP;
        if (s.spec?.type === 'ExternalName' || !ip || !isIPv4(ip)) continue;
        for (const p of s.spec?.ports ?? []) {
          const proto = (p.protocol ?? 'TCP').toLowerCase();
          if (proto === 'sctp') continue;
          ports++;
          const k = `${ip} . ${proto} . ${p.port}`;
          if (!clusterIPs.has(ip) || (!served.has(k) && !rejected.has(k))) missing.push(`${s.metadata.namespace}/${s.metadata.name} ${ip}:${p.port}/${proto}`);
        }
      }
      if (missing.length) {
        return { id: 'proxy.table', level: 'fail', message: `${missing.length} of ${ports} service ports missing from the table: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', …' : ''}`, fix: 'check the agent log (component "proxy"); a Service created in the last seconds may not be synced yet' };
      }
      return { id: 'proxy.table', level: 'pass', message: `table "ip ${PROXY_TABLE}" has all ${ports} service ports of ${services.length} Services (${served.size} with endpoints)` };
    },
  };
}
