/**
 * ServiceProxy: keeps the `ip nodelet-proxy` nftables table equal to what the API's Services and
 * EndpointSlices ask for on this node (kube-proxy's nftables mode: full syncs rewrite the whole
 * table, partial syncs only what changed; docs/services.md "How it syncs").
 *
 *   start() ─▶ route_localnet ─▶ base table (only if none is there) ─▶ `ready`
 *              ─▶ informers (Services, EndpointSlices, this Node) synced ─▶ first sync (full) ─▶ `synced`
 *
 *   loop:  change ──▶ dirty ──(≥ minSyncPeriod since the last sync)──▶ partial sync
 *          every syncPeriod ──▶ partial sync (kube-proxy's periodic sync is partial too)
 *          drift (nft monitor saw another process change the table) ──▶ full sync at once
 *          nft monitor gone ──(next driftCheckPeriod tick)──▶ full sync, which restarts it
 *          sync: model ─▶ TableWriter (full or partial nft -f) ─▶ UDP conntrack cleanup ─▶ metrics
 *          stale chains ──(1 s later, when no sync is due)──▶ deleted in their own transaction
 *          failed sync ──▶ full sync, retried with backoff (1 s doubling to syncPeriod)
 *
 * One loop does all nft work. A table left by a previous run is kept at start (traffic keeps
 * flowing across an agent restart) and replaced by the first sync. `close()` leaves the table
 * unless `cleanupOnShutdown`.
 */
import { existsSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { AgentError, Backoff, DisposableStore, Wakeup, abortError, describeError, hasCode, isAbortError, systemClock, type Clock, type Logger } from '@nodelet/base';
import { ENDPOINTSLICES, Informer, NODES, SERVICES, type ApiClient, type EndpointSlice, type Node, type Service } from '@nodelet/api/agent';
import type { ProxyConfig } from './config.js';
import type { TableExtension } from './contribution.js';
import { ConntrackCleaner, staleUdpEntries } from './conntrack.js';
import { commandRunner, type CommandRunner } from './exec.js';
import { inAnyCidr } from './ipv4.js';
import { buildModel, type ServicePortModel } from './model.js';
import { ProxyMetrics } from './metrics.js';
import { TableMonitor } from './monitor.js';
import { Nft } from './nft.js';
import { TABLE, renderDelete, renderTable, type RenderOptions } from './render.js';
import { TableWriter, type WriteMode } from './table-writer.js';
import { LbAddresses, wantedLbAddresses } from './lb-addresses.js';
import { HealthCheckServers, healthChecks } from './health-check.js';

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
  /** `full` rewrites the whole table on every sync: the old behaviour, the bench's baseline. Read at every sync. */
  syncMode?: 'incremental' | 'full';
  /**
   * Informers the agent already runs (source/informers.ts; `node` must select this node only):
   * subscribed to and started if needed, never closed here. Missing ones (all of them under
   * `nodelet proxy`) are created and owned by the proxy.
   */
  informers?: { services?: Informer<Service>; endpointSlices?: Informer<EndpointSlice>; node?: Informer<Node>; nodes?: Informer<Node> };
  /** Rules another part of the agent keeps in this table (NetworkPolicy enforcement; contribution.ts). */
  extension?: TableExtension;
  /** Where the eTP Local health-check node ports listen (default 0.0.0.0; tests: 127.0.0.1). */
  healthCheckBindAddress?: string;
}

export interface SyncInfo {
  reason: SyncReason;
  mode: WriteMode;
  /** An `nft -f` ran (a partial sync with nothing to change runs none). */
  wrote: boolean;
  durationMs: number;
  /** Time in the main `nft -f`. */
  applyMs: number;
  servicePorts: number;
  endpoints: number;
  /** Per-service chains (re)written and map/set elements added or deleted. */
  changedChains: number;
  elementChanges: number;
}

type SyncReason = 'initial' | 'change' | 'resync' | 'drift' | 'retry';
/** Reasons that make the next sync a full one. */
type FullReason = 'initial' | 'drift' | 'retry';

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
  /** Every Node: their addresses are never put on the load-balancer device. */
  readonly #nodes: Informer<Node>;
  readonly #lbAddresses: LbAddresses;
  readonly #healthChecks: HealthCheckServers;
  /** The informers this proxy made itself and closes. */
  readonly #owned: Array<{ close(): Promise<void> }> = [];
  readonly #monitor: TableMonitor;
  readonly #writer: TableWriter;
  #resolveSynced!: () => void;
  #rejectSynced!: (err: unknown) => void;
  #loop: Promise<void> | undefined;
  #closed: Promise<void> | undefined;
  #dirty = true;
  /** The next sync is full, for this reason. */
  #forced: FullReason | undefined = 'initial';
  #informersSynced = false;
  #lastSyncEnd = -Infinity;
  #lastPorts: ServicePortModel[] = [];
  #triggers: number[] = [];
  #sctp = false;
  #syncs = 0;
  #retryCancel: (() => void) | undefined;
  #cleanupCancel: (() => void) | undefined;
  /** The next sync is the periodic one (a partial sync, as kube-proxy's). */
  #resync = false;
  /** Stale chains are due for deletion (see #cleanup). */
  #cleanupDue = false;

  private constructor(o: ServiceProxyOptions) {
    this.#o = o;
    this.table = o.table ?? TABLE;
    this.#clock = o.clock ?? systemClock;
    this.#log = o.log;
    this.#runner = o.runner ?? commandRunner(o.netns);
    this.#nft = new Nft(this.#runner);
    this.#conntrack = new ConntrackCleaner(this.#runner, o.log);
    this.metrics = new ProxyMetrics(o.registry);
    this.#monitor = new TableMonitor({
      runner: this.#runner,
      table: this.table,
      log: o.log,
      onDrift: (by) => {
        this.metrics.driftRepairs.inc();
        this.#log.warn({ table: this.table, pid: by.pid, comm: by.comm }, 'Service proxy table changed behind our back; rewriting it');
        this.#force('drift');
      },
      // The periodic drift tick restarts it through a full sync.
      onExit: () => {},
    });
    this.#writer = new TableWriter({ nft: this.#nft, table: this.table, log: o.log, clock: this.#clock, monitor: this.#monitor });
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
    this.#nodes = shared.nodes ?? own(new Informer({ ...informer, resource: NODES }));
    this.#lbAddresses = new LbAddresses({ runner: this.#runner, log: o.log });
    this.#healthChecks = new HealthCheckServers({ bindAddress: o.healthCheckBindAddress, log: o.log });
    this.synced = new Promise<void>((resolve, reject) => {
      this.#resolveSynced = resolve;
      this.#rejectSynced = reject;
    });
    this.synced.catch(() => {}); // only marks it observed: whoever awaits synced gets the failure
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

  /** Asks for a full sync (the whole table rewritten) now, still at most one per minSyncPeriod. */
  requestFullSync(): void {
    this.#force('retry');
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
      await Promise.all([this.#services.waitForSync(stop), this.#slices.waitForSync(stop), this.#node.waitForSync(stop), this.#nodes.waitForSync(stop), this.#o.extension?.waitForSync(stop)]);
      this.#informersSynced = true;
      // The timers only flag work for the loop below, so they cannot fail; onError is for form.
      const onError = (err: unknown): void => this.#log.error({ err: describeError(err) }, 'Service proxy timer failed');
      this.#store.add(this.#clock.every(this.#o.config.syncPeriodMs, () => this.#periodic(), { signal: stop, onError }));
      this.#store.add(
        this.#clock.every(this.#o.config.driftCheckPeriodMs, () => {
          // Changes while `nft monitor` was not running went unseen: rewrite the table, which
          // also restarts the monitor.
          if (this.#syncs > 0 && !this.#monitor.running && !this.#forced) {
            this.#log.warn({ table: this.table }, 'nft monitor is not running; rewriting the service proxy table');
            this.#force('drift');
          }
        }, { signal: stop, onError }),
      );
      this.#wake.notify();
      for (;;) {
        await this.#wake.wait(stop);
        if (this.#dirty || this.#forced) await this.#syncWhenAllowed(stop);
        else if (this.#cleanupDue) await this.#cleanup(stop);
        if (this.#dirty || this.#forced || this.#cleanupDue) this.#wake.notify();
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
    // Not on update: every heartbeat of every node is one; a changed address waits for the periodic sync.
    this.#store.add(this.#nodes.on({ onAdd: () => this.#change(), onDelete: () => this.#change() }));
    for (const i of [this.#services, this.#slices, this.#node, this.#nodes]) i.start();
    const ext = this.#o.extension;
    if (ext) this.#store.add({ dispose: ext.subscribe(() => this.#change()) });
  }

  #change(): void {
    this.metrics.lastQueuedTimestamp.set(this.#clock.now() / 1000);
    this.#dirty = true;
    this.#wake.notify();
  }

  #force(reason: FullReason): void {
    this.#forced ??= reason;
    this.#wake.notify();
  }

  #periodic(): void {
    this.#resync = true;
    this.#dirty = true;
    this.#wake.notify();
  }

  async #syncWhenAllowed(stop: AbortSignal): Promise<void> {
    const wait = this.#lastSyncEnd + this.#o.config.minSyncPeriodMs - this.#clock.monotonic();
    if (wait > 0) await this.#clock.sleep(wait, stop);
    const forced = this.#forced;
    const reason: SyncReason = forced ?? (this.#resync ? 'resync' : 'change');
    this.#forced = undefined;
    this.#resync = false;
    this.#dirty = false;
    const triggers = this.#triggers;
    this.#triggers = [];
    try {
      await this.#sync(reason, forced, triggers, stop);
      this.#backoff.reset();
      this.#resolveSynced();
    } catch (err) {
      if (stop.aborted) throw err;
      this.#triggers.unshift(...triggers);
      this.metrics.syncFailures.inc();
      // What the table holds is unknown now: the retry writes it whole (kube-proxy's needFullSync).
      this.#writer.invalidate();
      const delayMs = this.#backoff.next();
      this.#log.warn({ err: describeError(err), reason, delayMs }, 'Service proxy sync failed, will retry');
      this.#retryCancel?.();
      this.#retryCancel = this.#clock.setTimer(delayMs, () => this.#force('retry'));
    } finally {
      this.#lastSyncEnd = this.#clock.monotonic();
    }
  }

  /** model → TableWriter (full or partial nft -f) → conntrack → metrics (the rules are live). */
  async #sync(reason: SyncReason, forced: FullReason | undefined, triggers: readonly number[], signal: AbortSignal): Promise<void> {
    const start = this.#clock.monotonic();
    const ports = buildModel({ services: this.#services.list(), slices: this.#slices.list(), nodeName: this.#o.nodeName, sctp: this.#sctp, localDNS: this.#o.config.localDNS });
    const full = forced ?? (this.#o.syncMode === 'full' ? 'full sync mode' : undefined);
    const extra = this.#o.extension?.contribution();
    const w = await this.#writer.write(ports, this.#renderOptions(), full, signal, extra);
    if (extra) this.#o.extension!.written(extra);
    if (w.cleanupFailed) this.metrics.cleanupFailures.inc();
    this.metrics.tableServices.set(w.state.services);
    this.metrics.tableEndpoints.set(w.state.endpoints);
    this.metrics.noLocalEndpoints.set({ traffic_policy: 'internal' }, w.state.noLocalEndpoints.internal);
    this.metrics.noLocalEndpoints.set({ traffic_policy: 'external' }, w.state.noLocalEndpoints.external);
    await this.#syncExternal(ports, signal);
    const stale = staleUdpEntries(this.#lastPorts, ports, this.#o.nodeName);
    this.#lastPorts = ports;
    if (stale.length) this.metrics.conntrackFailures.inc(await this.#conntrack.clean(stale, signal));
    const durationMs = this.#clock.monotonic() - start;
    this.#syncs++;
    this.metrics.syncDuration.observe(durationMs / 1000);
    (w.mode === 'full' ? this.metrics.syncFullDuration : this.metrics.syncPartialDuration).observe(durationMs / 1000);
    const now = this.#clock.now();
    this.metrics.lastSyncTimestamp.set(now / 1000);
    for (const t of triggers) this.metrics.networkProgramming.observe(Math.max(0, now - t) / 1000);
    const info: SyncInfo = {
      reason, mode: w.mode, wrote: w.wrote, durationMs, applyMs: w.applyMs, servicePorts: w.state.services, endpoints: w.state.endpoints,
      changedChains: w.changedChains, elementChanges: w.elementChanges,
    };
    if (w.mode === 'full') this.#log.info({ ...info, why: w.fullReason }, 'Service proxy table rewritten');
    else this.#log.debug(info, 'Service proxy rules synced');
    this.#o.onSync?.(info);
    this.#scheduleCleanup();
  }

  /**
   * After the rules are live: the load-balancer addresses this node serves go on the node
   * (lb-addresses.ts) and the eTP Local health checks follow the local endpoints (health-check.ts).
   * An `ip` failure is logged; the next sync (at the latest the periodic one) tries again.
   */
  async #syncExternal(ports: readonly ServicePortModel[], signal: AbortSignal): Promise<void> {
    this.#healthChecks.update(healthChecks(this.#services.list(), ports, this.#o.nodeName));
    const nodeAddrs = new Set(this.#nodes.list().flatMap((n) => (n.status?.addresses ?? []).map((a) => a.address)));
    try {
      await this.#lbAddresses.sync(wantedLbAddresses(ports, this.#o.nodeName, nodeAddrs), signal);
    } catch (err) {
      if (signal.aborted) throw err;
      this.#log.warn({ err: describeError(err) }, 'Putting load-balancer addresses on the node failed; retried at the next sync');
    }
  }

  /** Stale chains are deleted by a sync at least a grace period after they went stale. */
  #scheduleCleanup(): void {
    this.#cleanupCancel?.();
    this.#cleanupCancel = undefined;
    const due = this.#writer.cleanupDueInMs();
    if (due === undefined) return;
    this.#cleanupCancel = this.#clock.setTimer(due, () => {
      this.#cleanupDue = true;
      this.#wake.notify();
    });
  }

  /**
   * Deletes stale chains between syncs. Not a sync: it does not take the minSyncPeriod slot the
   * next change may need (a change is programmed at once after a quiet second).
   */
  async #cleanup(stop: AbortSignal): Promise<void> {
    this.#cleanupDue = false;
    try {
      if (!(await this.#writer.cleanup(stop))) this.metrics.cleanupFailures.inc();
    } catch (err) {
      if (stop.aborted) throw err;
      this.metrics.cleanupFailures.inc();
    }
    this.#scheduleCleanup();
  }

  /** Stops watching and syncing; deletes the table only when `cleanupOnShutdown`. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      this.#stop.abort();
      this.#rejectSynced(abortError(new Error('service proxy closed')));
      await this.#loop;
      this.#retryCancel?.();
      this.#cleanupCancel?.();
      this.#monitor.close();
      this.#healthChecks.close();
      this.#store.dispose();
      await Promise.all(this.#owned.map((i) => i.close()));
      if (this.#o.config.cleanupOnShutdown) {
        await this.#nft.apply(renderDelete(this.table), AbortSignal.timeout(10_000)).catch((err: unknown) => {
          this.#log.warn({ err: describeError(err) }, 'Deleting the service proxy table failed');
        });
        await this.#lbAddresses.remove(AbortSignal.timeout(10_000)).catch((err: unknown) => {
          this.#log.warn({ err: describeError(err) }, 'Removing the load-balancer addresses from the node failed');
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
