/**
 * ServiceProxy: keeps the `ip nodelet-proxy` nftables table equal to what the API's Services and
 * EndpointSlices ask for on this node (kube-proxy's nftables mode, reduced to one table that is
 * rewritten whole in one transaction per sync).
 *
 *   start() ─▶ route_localnet ─▶ base table (only if none is there) ─▶ `ready`
 *              ─▶ informers (Services, EndpointSlices, this Node) synced ─▶ first sync ─▶ `synced`
 *
 *   loop:  change ──▶ dirty ──(≥ minSyncPeriod since the last sync)──▶ sync
 *          every syncPeriod ──▶ forced sync          every driftCheckPeriod ──▶ drift check
 *          drift (live table ≠ last written, or gone) ──▶ forced sync at once
 *          sync: model ─▶ render ─▶ nft -f ─▶ UDP conntrack cleanup ─▶ metrics
 *          idle after a write ─▶ digest of the live table (the drift baseline)
 *          failed sync ──▶ retried with backoff (1 s doubling to syncPeriod)
 *
 * One loop does all nft work, so a drift check never reads a table halfway through a write.
 * A table left by a previous run is kept at start (traffic keeps flowing across an agent restart)
 * and replaced by the first sync. `close()` leaves the table unless `cleanupOnShutdown`.
 */
import { existsSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { AgentError, Backoff, DisposableStore, Wakeup, abortError, describeError, hasCode, isAbortError, unlessNotFound, systemClock, type Clock, type Logger } from '@nodelet/base';
import { ENDPOINTSLICES, Informer, NODES, SERVICES, type ApiClient, type EndpointSlice, type Node, type Service } from '@nodelet/api';
import type { ProxyConfig } from './config.js';
import { ConntrackCleaner, staleUdpEntries } from './conntrack.js';
import { commandRunner, type CommandRunner } from './exec.js';
import { inAnyCidr } from './ipv4.js';
import { buildModel, type ServicePortModel } from './model.js';
import { ProxyMetrics } from './metrics.js';
import { Nft, affinityEntries, tableDigest } from './nft.js';
import { TABLE, renderDelete, renderTable, type RenderOptions } from './render.js';

/** The annotation the endpoint controllers set to when the change that caused a write happened. */
export const LAST_CHANGE_TRIGGER_TIME = 'endpoints.kubernetes.io/last-change-trigger-time';

export interface ServiceProxyOptions {
  api: ApiClient;
  nodeName: string;
  config: ProxyConfig;
  log: Logger;
  /** Where the kubeproxy_* metrics go (the agent's registry). */
  registry: Registry;
  clock?: Clock;
  /** Run nft, conntrack and sysctl in this network namespace (tests). */
  netns?: string;
  /** Replaces the process runner (unit tests). */
  runner?: CommandRunner;
  /** Table name (default nodelet-proxy). */
  table?: string;
  /** Called after every successful sync, once the rules are live (bench, tests). */
  onSync?: (info: SyncInfo) => void;
  /**
   * Informers the agent already runs (source/informers.ts; `node` must select this node only):
   * subscribed to and started if needed, never closed here. Missing ones (all of them under
   * `nodelet proxy`) are created and owned by the proxy.
   */
  informers?: { services?: Informer<Service>; endpointSlices?: Informer<EndpointSlice>; node?: Informer<Node> };
}

export interface SyncInfo {
  reason: SyncReason;
  wrote: boolean;
  durationMs: number;
  applyMs: number;
  servicePorts: number;
  endpoints: number;
}

type SyncReason = 'initial' | 'change' | 'resync' | 'drift' | 'retry';

export class ServiceProxy {
  readonly metrics: ProxyMetrics;
  readonly table: string;
  /** Resolves once the table (at least the base table rejecting the service CIDR) is in place. */
  readonly ready: Promise<void>;
  /** Resolves after the first sync with the informers' view; rejects if closed before. */
  readonly synced: Promise<void>;
  readonly #o: ServiceProxyOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #nft: Nft;
  readonly #runner: CommandRunner;
  readonly #conntrack: ConntrackCleaner;
  readonly #stop = new AbortController();
  readonly #store = new DisposableStore();
  readonly #wake = new Wakeup();
  readonly #backoff: Backoff;
  readonly #services: Informer<Service>;
  readonly #slices: Informer<EndpointSlice>;
  readonly #node: Informer<Node>;
  /** The informers this proxy made itself and closes. */
  readonly #owned: Array<{ close(): Promise<void> }> = [];
  #resolveSynced!: () => void;
  #rejectSynced!: (err: unknown) => void;
  #loop: Promise<void> | undefined;
  #closed: Promise<void> | undefined;
  #dirty = true;
  #forced: SyncReason | undefined = 'initial';
  #driftPending = false;
  /** A write happened; the digest drift checks compare with is still to be read. */
  #baselinePending = false;
  #informersSynced = false;
  #lastSyncEnd = -Infinity;
  #lastBareScript = '';
  #lastDigest = '';
  #lastPorts: ServicePortModel[] = [];
  #triggers: number[] = [];
  #sctp = false;
  #syncs = 0;
  #retryCancel: (() => void) | undefined;

  private constructor(o: ServiceProxyOptions) {
    this.#o = o;
    this.table = o.table ?? TABLE;
    this.#clock = o.clock ?? systemClock;
    this.#log = o.log;
    this.#runner = o.runner ?? commandRunner(o.netns);
    this.#nft = new Nft(this.#runner);
    this.#conntrack = new ConntrackCleaner(this.#runner, o.log);
    this.metrics = new ProxyMetrics(o.registry);
    this.#backoff = new Backoff({ initialMs: 1000, maxMs: o.config.syncPeriodMs, clock: this.#clock });
    const informer = { client: o.api, clock: this.#clock, logger: o.log };
    const own = <T extends { close(): Promise<void> }>(i: T): T => {
      this.#owned.push(i);
      return i;
    };
    const shared = o.informers ?? {};
    this.#services = shared.services ?? own(new Informer({ ...informer, resource: SERVICES }));
    this.#slices = shared.endpointSlices ?? own(new Informer({ ...informer, resource: ENDPOINTSLICES }));
    this.#node = shared.node ?? own(new Informer({ ...informer, resource: NODES, fieldSelector: `metadata.name=${o.nodeName}` }));
    this.synced = new Promise<void>((resolve, reject) => {
      this.#resolveSynced = resolve;
      this.#rejectSynced = reject;
    });
    this.synced.catch(() => {});
    this.ready = Promise.resolve();
  }

  /**
   * Prepares the node (route_localnet, SCTP check), installs the base table unless a table is
   * already there, and starts watching. Throws ERR_FAILED_PRECONDITION when nft cannot be run.
   */
  static async start(o: ServiceProxyOptions): Promise<ServiceProxy> {
    const p = new ServiceProxy(o);
    try {
      await p.#prepare(AbortSignal.timeout(30_000));
    } catch (err) {
      p.#rejectSynced(err);
      throw err;
    }
    p.#loop = p.#run(p.#stop.signal);
    return p;
  }

  /** Number of successful syncs so far. */
  get syncs(): number {
    return this.#syncs;
  }

  /** Asks for a sync now (still at most one per minSyncPeriod). */
  requestSync(): void {
    this.#dirty = true;
    this.#wake.notify();
  }

  async #prepare(signal: AbortSignal): Promise<void> {
    const c = this.#o.config;
    // The kernel has SCTP when its sysctl directory exists; without it SCTP ports get no rules
    // (and so are rejected like any other unserved port of a ClusterIP).
    this.#sctp = existsSync('/proc/sys/net/sctp');
    if (!this.#sctp) this.#log.info({}, 'Kernel has no SCTP support; SCTP service ports are not proxied');
    if (c.localhostNodePorts) {
      const r = await this.#runner.run(['sysctl', '-w', 'net.ipv4.conf.all.route_localnet=1'], { signal, timeoutMs: 10_000 });
      if (r.code !== 0) this.#log.warn({ stderr: r.stderr.trim() }, 'Setting net.ipv4.conf.all.route_localnet=1 failed; NodePorts on 127.0.0.1 will not work');
      else this.#log.info({}, 'Set net.ipv4.conf.all.route_localnet=1 for NodePorts on 127.0.0.1');
    }
    try {
      await this.#nft.listJson(this.table, signal);
      this.#log.info({ table: this.table }, 'Kept the service proxy table of a previous run until the first sync');
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) throw wrapNft(err);
      await this.#nft.apply(renderTable([], this.#renderOptions()).script, signal).catch((e: unknown) => {
        throw wrapNft(e);
      });
      this.#log.info({ table: this.table, serviceCIDR: c.serviceCIDR }, 'Base service proxy table installed');
    }
  }

  #renderOptions(): RenderOptions {
    const c = this.#o.config;
    let nodePortIPs: string[] | undefined;
    if (c.nodePortAddresses.length) {
      const addrs = this.#node.get(this.#o.nodeName)?.status?.addresses ?? [];
      nodePortIPs = [...new Set(addrs.map((a) => a.address).filter((ip) => inAnyCidr(ip, c.nodePortAddresses)))].sort();
    }
    return { nodeName: this.#o.nodeName, serviceCIDR: c.serviceCIDR, clusterCIDR: c.clusterCIDR, nodePortIPs, localhostNodePorts: c.localhostNodePorts, table: this.table };
  }

  async #run(stop: AbortSignal): Promise<void> {
    try {
      this.#watch();
      await Promise.all([this.#services.waitForSync(stop), this.#slices.waitForSync(stop), this.#node.waitForSync(stop)]);
      this.#informersSynced = true;
      // The timers only flag work for the loop below, so they cannot fail; onError is for form.
      const onError = (err: unknown): void => this.#log.error({ err: describeError(err) }, 'Service proxy timer failed');
      this.#store.add(this.#clock.every(this.#o.config.syncPeriodMs, () => this.#force('resync'), { signal: stop, onError }));
      this.#store.add(
        this.#clock.every(this.#o.config.driftCheckPeriodMs, () => {
          this.#driftPending = true;
          this.#wake.notify();
        }, { signal: stop, onError }),
      );
      this.#wake.notify();
      for (;;) {
        await this.#wake.wait(stop);
        if (this.#dirty || this.#forced) await this.#syncWhenAllowed(stop);
        else if (this.#baselinePending) await this.#takeBaseline(stop);
        else if (this.#driftPending) await this.#checkDrift(stop);
        if (this.#dirty || this.#forced || this.#baselinePending) this.#wake.notify();
      }
    } catch (err) {
      if (!isAbortError(err) || !stop.aborted) this.#log.error({ err: describeError(err) }, 'Service proxy loop ended');
    }
  }

  #watch(): void {
    const onService = (): void => {
      this.metrics.serviceChanges.inc();
      this.#change();
    };
    const onSlice = (s: EndpointSlice): void => {
      this.metrics.endpointChanges.inc();
      // The changes of the initial list are not "programming latency": the proxy just started.
      if (this.#informersSynced && this.#triggers.length < 10_000) {
        const t = Date.parse(s.metadata.annotations?.[LAST_CHANGE_TRIGGER_TIME] ?? '');
        this.#triggers.push(Number.isFinite(t) ? t : this.#clock.now());
      }
      this.#change();
    };
    this.#store.add(this.#services.on({ onAdd: onService, onUpdate: onService, onDelete: onService }));
    this.#store.add(this.#slices.on({ onAdd: onSlice, onUpdate: (_o, n) => onSlice(n), onDelete: onSlice }));
    this.#store.add(this.#node.on({ onAdd: () => this.#change(), onUpdate: () => this.#change(), onDelete: () => this.#change() }));
    for (const i of [this.#services, this.#slices, this.#node]) i.start();
  }

  #change(): void {
    this.metrics.lastQueuedTimestamp.set(this.#clock.now() / 1000);
    this.#dirty = true;
    this.#wake.notify();
  }

  #force(reason: SyncReason): void {
    this.#forced ??= reason;
    this.#wake.notify();
  }

  async #syncWhenAllowed(stop: AbortSignal): Promise<void> {
    const wait = this.#lastSyncEnd + this.#o.config.minSyncPeriodMs - this.#clock.monotonic();
    if (wait > 0) await this.#clock.sleep(wait, stop);
    const reason: SyncReason = this.#forced ?? 'change';
    this.#forced = undefined;
    this.#dirty = false;
    const triggers = this.#triggers;
    this.#triggers = [];
    try {
      await this.#sync(reason, triggers, stop);
      this.#backoff.reset();
      this.#resolveSynced();
    } catch (err) {
      if (stop.aborted) throw err;
      this.#triggers.unshift(...triggers);
      this.metrics.syncFailures.inc();
      const delayMs = this.#backoff.next();
      this.#log.warn({ err: describeError(err), reason, delayMs }, 'Service proxy sync failed, will retry');
      this.#retryCancel?.();
      this.#retryCancel = this.#clock.setTimer(delayMs, () => this.#force('retry'));
    } finally {
      this.#lastSyncEnd = this.#clock.monotonic();
    }
  }

  /** model → render → nft -f → conntrack → metrics (the rules are live) → digest for drift checks. */
  async #sync(reason: SyncReason, triggers: readonly number[], signal: AbortSignal): Promise<void> {
    const start = this.#clock.monotonic();
    const ports = buildModel({ services: this.#services.list(), slices: this.#slices.list(), nodeName: this.#o.nodeName, sctp: this.#sctp, localDNS: this.#o.config.localDNS });
    const opts = this.#renderOptions();
    const bare = renderTable(ports, opts);
    let applyMs = 0;
    const wrote = reason !== 'change' || bare.script !== this.#lastBareScript;
    if (wrote) {
      let script = bare.script;
      if (ports.some((p) => p.affinityTimeoutS !== undefined)) {
        // ClientIP stickiness lives in the affinity sets; carry their live entries over.
        const live = await unlessNotFound(this.#nft.listJson(this.table, signal));
        if (live) script = renderTable(ports, opts, affinityEntries(live)).script;
      }
      const t0 = this.#clock.monotonic();
      await this.#nft.apply(script, signal);
      applyMs = this.#clock.monotonic() - t0;
      this.#lastDigest = '';
      this.#lastBareScript = bare.script;
      this.metrics.tableServices.set(bare.services);
      this.metrics.tableEndpoints.set(bare.endpoints);
      this.metrics.noLocalEndpoints.set({ traffic_policy: 'internal' }, bare.noLocalEndpoints.internal);
      this.metrics.noLocalEndpoints.set({ traffic_policy: 'external' }, bare.noLocalEndpoints.external);
    }
    const stale = staleUdpEntries(this.#lastPorts, ports, this.#o.nodeName);
    this.#lastPorts = ports;
    if (stale.length) this.metrics.conntrackFailures.inc(await this.#conntrack.clean(stale, signal));
    const durationMs = this.#clock.monotonic() - start;
    this.#syncs++;
    this.metrics.syncDuration.observe(durationMs / 1000);
    const now = this.#clock.now();
    this.metrics.lastSyncTimestamp.set(now / 1000);
    for (const t of triggers) this.metrics.networkProgramming.observe(Math.max(0, now - t) / 1000);
    const info: SyncInfo = { reason, wrote, durationMs, applyMs, servicePorts: bare.services, endpoints: bare.endpoints };
    this.#log.debug(info, 'Service proxy rules synced');
    this.#o.onSync?.(info);
    // Reading the table back costs about as much as writing it (large tables), so the loop takes
    // the drift baseline when it has nothing else to do, not on the programming path.
    if (wrote) this.#baselinePending = true;
  }

  async #takeBaseline(stop: AbortSignal): Promise<void> {
    this.#baselinePending = false;
    try {
      this.#lastDigest = tableDigest(await this.#nft.listJson(this.table, stop));
    } catch (err) {
      if (stop.aborted) throw err;
      this.#log.warn({ err: describeError(err) }, 'Reading the service proxy table back failed');
    }
  }

  async #checkDrift(stop: AbortSignal): Promise<void> {
    this.#driftPending = false;
    if (!this.#lastDigest) return;
    let digest: string | undefined;
    try {
      digest = tableDigest(await this.#nft.listJson(this.table, stop));
    } catch (err) {
      if (stop.aborted) throw err;
      if (!hasCode(err, 'ERR_NOT_FOUND')) {
        this.#log.warn({ err: describeError(err) }, 'Reading the service proxy table failed');
        return;
      }
    }
    if (digest === this.#lastDigest) return;
    this.metrics.driftRepairs.inc();
    this.#log.warn({ table: this.table, missing: digest === undefined }, 'Service proxy table changed behind our back; rewriting it');
    this.#force('drift');
  }

  /** Stops watching and syncing; deletes the table only when `cleanupOnShutdown`. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop.abort();
      this.#rejectSynced(abortError(new Error('service proxy closed')));
      await this.#loop;
      this.#retryCancel?.();
      this.#store.dispose();
      await Promise.all(this.#owned.map((i) => i.close()));
      if (this.#o.config.cleanupOnShutdown) {
        await this.#nft.apply(renderDelete(this.table), AbortSignal.timeout(10_000)).catch((err: unknown) => {
          this.#log.warn({ err: describeError(err) }, 'Deleting the service proxy table failed');
        });
      }
      this.#log.info({ table: this.table, kept: !this.#o.config.cleanupOnShutdown }, 'Service proxy stopped');
    })();
    return this.#closed;
  }
}

/** Deletes the proxy's table (idempotent: a missing table is fine). For shutdown, `lab down`, uninstall. */
export async function deleteProxyTable(o: { netns?: string; table?: string; signal: AbortSignal }): Promise<void> {
  await new Nft(commandRunner(o.netns)).apply(renderDelete(o.table ?? TABLE), o.signal);
}

function wrapNft(err: unknown): unknown {
  if (isAbortError(err) || hasCode(err, 'ERR_FAILED_PRECONDITION')) return err;
  return new AgentError('ERR_FAILED_PRECONDITION', `cannot program nftables (${describeError(err)}); install nftables, run as root, or set --proxy-mode none`, { cause: err });
}
