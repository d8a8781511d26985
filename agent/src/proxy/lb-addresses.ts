/**
 * Puts the LoadBalancer addresses this node serves on the node: each as a /32 on the dummy
 * device `nodelet-lb0` (as kube-proxy's ipvs mode holds Service addresses on `kube-ipvs0`), so
 * the kernel treats them as local: the node answers ARP for them on its LAN (Linux's default
 * `arp_ignore=0`) and accepts them, and the proxy's DNAT (render-external.ts) sends them on.
 * docs/network.md "LoadBalancer addresses" says why this and not a userspace ARP responder.
 *
 * A node holds an address only while it can serve it: some endpoint anywhere under eTP Cluster,
 * a local one under eTP Local (as MetalLB's L2 speakers announce only then). Addresses any Node
 * already has (the servicelb controller's node-IP mode) are never added. Everything else on the
 * device is removed: the device is ours. Work is read with `ip -json` and done with `ip addr`.
 */
import type { Logger } from '@nodelet/base';
import { AgentError } from '@nodelet/base';
import type { CommandRunner } from './exec.js';
import { categorize, type ServicePortModel } from './model.js';

export const LB_DEVICE = 'nodelet-lb0';

/** The load-balancer IPs this node should hold, sorted: served here, and no Node's own address. */
export function wantedLbAddresses(ports: readonly ServicePortModel[], nodeName: string, nodeAddresses: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const p of ports) {
    if (!p.loadBalancerIPs?.length) continue;
    const c = categorize(p, nodeName);
    if (!(p.externalLocal ? c.local.length > 0 : c.hasEndpoints)) continue;
    for (const ip of p.loadBalancerIPs) if (!nodeAddresses.has(ip)) out.add(ip);
  }
  return [...out].sort();
}

interface IpAddrJson {
  ifname?: string;
  addr_info?: Array<{ family?: string; local?: string; prefixlen?: number }>;
}

export class LbAddresses {
  readonly #runner: CommandRunner;
  readonly #log: Logger;
  readonly #device: string;
  /** What the device held after the last sync; undefined until read once (a previous run's may be there). */
  #held: ReadonlySet<string> | undefined;

  constructor(o: { runner: CommandRunner; log: Logger; device?: string }) {
    this.#runner = o.runner;
    this.#log = o.log;
    this.#device = o.device ?? LB_DEVICE;
  }

  async #ip(args: string[], signal: AbortSignal): Promise<string> {
    const r = await this.#runner.run(['ip', ...args], { signal, timeoutMs: 10_000 });
    if (r.code !== 0) throw new AgentError('ERR_INTERNAL', `ip ${args.join(' ')} failed: ${r.stderr.trim()}`);
    return r.stdout;
  }

  /** Makes the device hold exactly `wanted` (creating it when first needed). */
  async sync(wanted: readonly string[], signal: AbortSignal): Promise<void> {
    if (!wanted.length && this.#held?.size === 0) return;
    const links = JSON.parse((await this.#ip(['-json', 'addr', 'show'], signal)) || '[]') as IpAddrJson[];
    const dev = links.find((l) => l.ifname === this.#device);
    if (!dev && !wanted.length) {
      this.#held = new Set();
      return;
    }
    if (!dev) {
      // A kernel without the dummy module (some container hosts) gets a bridge without ports,
      // which holds local addresses the same way and forwards nothing.
      let kind = 'dummy';
      const made = await this.#runner.run(['ip', 'link', 'add', this.#device, 'type', 'dummy'], { signal, timeoutMs: 10_000 });
      if (made.code !== 0) {
        kind = 'bridge';
        await this.#ip(['link', 'add', this.#device, 'type', 'bridge'], signal);
      }
      await this.#ip(['link', 'set', this.#device, 'up'], signal);
      this.#log.info({ device: this.#device, kind }, 'Created the load-balancer address device');
    }
    const have = new Set((dev?.addr_info ?? []).filter((a) => a.family === 'inet' && a.local).map((a) => `${a.local}/${a.prefixlen}`));
    const want = new Set(wanted.map((ip) => `${ip}/32`));
    for (const a of want) if (!have.has(a)) await this.#ip(['addr', 'replace', a, 'dev', this.#device], signal);
    this.#held = undefined;
    for (const a of have) if (!want.has(a)) await this.#ip(['addr', 'del', a, 'dev', this.#device], signal);
    this.#held = new Set(wanted);
    if ([...want].some((a) => !have.has(a)) || [...have].some((a) => !want.has(a))) this.#log.info({ device: this.#device, addresses: wanted }, 'Load-balancer addresses on the node updated');
  }

  /** Removes the device and its addresses (cleanupOnShutdown); a missing device is fine. */
  async remove(signal: AbortSignal): Promise<void> {
    await this.#runner.run(['ip', 'link', 'del', this.#device], { signal, timeoutMs: 10_000 });
  }
}
