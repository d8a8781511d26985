/**
 * Stale UDP conntrack entries. UDP has no connection end, so a conntrack entry keeps sending a
 * client's datagrams to the endpoint (or the reject) chosen for its first packet until it times
 * out. After each sync, as kube-proxy does:
 *   - a UDP service port that went from no endpoints to some: delete every entry to its
 *     ClusterIP:port and NodePort (they were made while it rejected or had no rules);
 *   - an endpoint that is no longer served: delete the entries DNATed to it through that
 *     ClusterIP or NodePort.
 * `staleUdpEntries` is the pure diff; `ConntrackCleaner` runs `conntrack -D` for each.
 */
import type { Logger } from '@nodelet/base';
import { describeError } from '@nodelet/base';
import type { CommandRunner } from './exec.js';
import { categorize, portKey, type ServicePortModel } from './model.js';

export type StaleEntry =
  | { kind: 'service'; ip: string; port: number }
  | { kind: 'nodeport'; port: number }
  | { kind: 'service-endpoint'; ip: string; endpointIP: string }
  | { kind: 'nodeport-endpoint'; port: number; endpointIP: string };

interface UdpView {
  clusterIP: string;
  port: number;
  nodePort?: number;
  served: Set<string>;
}

function udpViews(ports: readonly ServicePortModel[], nodeName: string): Map<string, UdpView> {
  const out = new Map<string, UdpView>();
  for (const p of ports) {
    if (p.protocol !== 'udp') continue;
    const c = categorize(p, nodeName);
    out.set(portKey(p), { clusterIP: p.clusterIP, port: p.port, nodePort: p.nodePort, served: new Set(c.reachable.map((e) => e.ip)) });
  }
  return out;
}

/** What to delete after moving from `prev` to `next` (both as rendered). Pure. */
export function staleUdpEntries(prev: readonly ServicePortModel[], next: readonly ServicePortModel[], nodeName: string): StaleEntry[] {
  const before = udpViews(prev, nodeName);
  const after = udpViews(next, nodeName);
  const out: StaleEntry[] = [];
  const seen = new Set<string>();
  const add = (e: StaleEntry): void => {
    const k = JSON.stringify(e);
    if (!seen.has(k)) {
      seen.add(k);
      out.push(e);
    }
  };
  for (const [key, now] of after) {
    const was = before.get(key);
    if (now.served.size > 0 && (!was || was.served.size === 0)) {
      add({ kind: 'service', ip: now.clusterIP, port: now.port });
      if (now.nodePort) add({ kind: 'nodeport', port: now.nodePort });
    }
  }
  for (const [key, was] of before) {
    const now = after.get(key);
    for (const ip of was.served) {
      if (now?.served.has(ip) && now.clusterIP === was.clusterIP) continue;
      add({ kind: 'service-endpoint', ip: was.clusterIP, endpointIP: ip });
      if (was.nodePort) add({ kind: 'nodeport-endpoint', port: was.nodePort, endpointIP: ip });
    }
  }
  return out;
}

/** The `conntrack` arguments for one entry kind. */
export function conntrackArgs(e: StaleEntry): string[] {
  switch (e.kind) {
    case 'service':
      return ['-D', '-p', 'udp', '--orig-dst', e.ip, '--orig-port-dst', String(e.port)];
    case 'nodeport':
      return ['-D', '-p', 'udp', '--orig-port-dst', String(e.port)];
    case 'service-endpoint':
      return ['-D', '-p', 'udp', '--orig-dst', e.ip, '--dst-nat', e.endpointIP];
    case 'nodeport-endpoint':
      return ['-D', '-p', 'udp', '--orig-port-dst', String(e.port), '--dst-nat', e.endpointIP];
  }
}

export class ConntrackCleaner {
  readonly #run: CommandRunner;
  readonly #log: Logger;

  constructor(runner: CommandRunner, log: Logger) {
    this.#run = runner;
    this.#log = log;
  }

  /** Deletes each entry set; a failure is logged and does not stop the others. Returns how many commands failed. */
  async clean(entries: readonly StaleEntry[], signal: AbortSignal): Promise<number> {
    let failed = 0;
    for (const e of entries) {
      try {
        const r = await this.#run.run(['conntrack', ...conntrackArgs(e)], { signal, timeoutMs: 10_000 });
        // conntrack exits 1 when nothing matched ("0 flow entries have been deleted").
        if (r.code !== 0 && !/0 flow entries/.test(r.stderr)) throw new Error(r.stderr.trim());
        this.#log.debug({ entry: e }, 'Stale UDP conntrack entries deleted');
      } catch (err) {
        if (signal.aborted) throw err;
        failed++;
        this.#log.warn({ entry: e, err: describeError(err) }, 'Deleting stale UDP conntrack entries failed');
      }
    }
    return failed;
  }
}
