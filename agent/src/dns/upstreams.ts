/**
 * The upstream resolvers names outside the cluster zone are forwarded to: the nameservers of the
 * node's resolv.conf (with the systemd-resolved rule of resolv-conf.ts), port 53.
 *
 * The file is read at start and again in the background at most every `refreshMs` when the list
 * is asked for, so a DHCP or resolvconf change reaches the resolver without a restart; a failed
 * read keeps the last good list. Addresses the resolver itself answers on (its bind address and
 * the cluster DNS IPs) are left out: forwarding to them would loop.
 */
import { describeError, type Logger } from '@nodelet/base';
import { ipKey } from './names.js';
import { readHostResolvConf } from './resolv-conf.js';
import type { Upstream } from './forwarder.js';

export interface UpstreamSourceOptions {
  resolvConf: string;
  /** Addresses that are this resolver (never forwarded to). */
  self: readonly string[];
  refreshMs?: number;
  log?: Logger;
  now?: () => number;
  /** Where systemd-resolved keeps the real upstreams (tests). */
  systemdResolvedConf?: string;
}

export class UpstreamSource {
  readonly #o: UpstreamSourceOptions;
  readonly #now: () => number;
  #list: Upstream[] = [];
  #readAt = -Infinity;
  #reading?: Promise<void>;
  #warned = '';

  constructor(o: UpstreamSourceOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  /** Reads the file now; resolves when done (never rejects). */
  refresh(): Promise<void> {
    this.#reading ??= this.#read().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  /** The current list; starts a background re-read when the last one is older than `refreshMs`. */
  list(): readonly Upstream[] {
    if (this.#now() - this.#readAt >= (this.#o.refreshMs ?? 30_000)) void this.refresh();
    return this.#list;
  }

  async #read(): Promise<void> {
    this.#readAt = this.#now();
    if (!this.#o.resolvConf) return;
    try {
      const conf = await readHostResolvConf(this.#o.resolvConf, { upstreamConf: this.#o.systemdResolvedConf });
      const self = new Set(this.#o.self.map(ipKey));
      const looping = conf.nameservers.filter((ip) => self.has(ipKey(ip)));
      if (looping.length && this.#warned !== looping.join()) {
        this.#warned = looping.join();
        this.#o.log?.warn({ resolvConf: conf.path, nameservers: looping }, 'Upstream resolvers that are this resolver are skipped');
      }
      this.#list = conf.nameservers.filter((ip) => ipKey(ip) !== undefined && !self.has(ipKey(ip))).map((ip) => ({ ip, port: 53 }));
    } catch (err) {
      this.#o.log?.warn({ resolvConf: this.#o.resolvConf, err: describeError(err) }, 'Cannot read upstream resolvers, keeping the last list');
    }
  }
}
