/**
 * PLEG: relists sandboxes and containers from CRI every second (containerd 1.6 has no
 * GetContainerEvents), keeps the per-pod runtime cache, and wakes the workers of pods that changed
 * (kubelet pleg/generic.go + container/cache.go).
 *
 *   relist ──▶ cache (uid → ObservedPod, stamped with the relist start time)
 *          └─▶ onPodChanged(uid) for every pod whose view differs
 *   worker ──▶ getNewerThan(uid, lastSync)   (never acts on state older than its last sync)
 *                 cache newer? ──yes──▶ the cached view
 *                 └─no──▶ refresh that pod alone now (its sandboxes and containers, by label),
 *                         stamp it, and return it
 *
 * The relist is for what others change (a container that exits, a sandbox removed behind the
 * agent's back). What the agent itself just did, its worker learns at once through the per-pod
 * refresh instead of waiting up to a period for the next relist (docs/agent.md, "Starting a pod").
 * A pod refreshed after a relist started keeps its refreshed view when that relist lands.
 *
 * Statuses that cannot change are cached by ID: an exited container's exit code and times, a
 * sandbox's IPs. Only sandboxes/containers the agent labelled are listed (foreign ones are left alone).
 */
import { setMaxListeners } from 'node:events';
import { Semaphore, describeError, hasCode, linkAbort, type Clock, type Logger, type PeriodicJob } from '@nodelet/base';
import type { CriContainer, CriContainerStatus, CriSandbox, RuntimeService } from '../kubecontainer/cri.js';
import { MANAGED_BY, POD_NAME, POD_NAMESPACE, POD_UID } from '../kubecontainer/labels.js';
import {
  containerFromCri,
  emptyObservedPod,
  sameObservedPod,
  sandboxFromCri,
  sortNewestFirst,
  type ObservedPod,
} from '../kubecontainer/observed.js';

export interface PlegOptions {
  runtime: RuntimeService;
  clock: Clock;
  log: Logger;
  periodMs?: number;
  onPodChanged(uid: string): void;
  /** Seconds one relist took (kubelet_pleg_relist_duration_seconds). */
  observeRelist?(seconds: number): void;
  /**
   * A relist succeeded after one or more failed: the runtime answers again (containerd came
   * back). The agent reports node status at once instead of at its next period.
   */
  onRecovered?(): void;
}

/** kubelet `genericPlegRelistThreshold`: a relist older than this makes the node unhealthy. */
const RELIST_THRESHOLD_MS = 3 * 60_000;
const STATUS_CONCURRENCY = 16;

export class Pleg {
  readonly #o: PlegOptions;
  #job?: PeriodicJob;
  #pods = new Map<string, ObservedPod>();
  readonly #exited = new Map<string, CriContainerStatus>();
  readonly #running = new Map<string, CriContainerStatus>();
  readonly #sandboxIps = new Map<string, string[]>();
  /** Clock time at which the last completed relist started (0 = none yet). */
  #stamp = 0;
  #lastOk = 0;
  /** The last relist failed (onRecovered fires on the next success). */
  #failing = false;
  #waiters: Array<{ after: number; resolve: () => void }> = [];
  /** Pods refreshed alone since the last relist started: the start time of that refresh. */
  readonly #podStamps = new Map<string, number>();

  constructor(o: PlegOptions) {
    this.#o = o;
  }

  /**
   * Relists at once, then one period after each relist ends, and as soon as possible after
   * `relistSoon()`; until `signal` aborts (resolves once the last relist has ended). Errors are
   * logged and retried on the next period.
   */
  run(signal: AbortSignal): Promise<void> {
    const job = this.#o.clock.every(this.#o.periodMs ?? 1000, (s) => this.relist(s), {
      signal,
      immediate: true,
      onError: (err) => {
        this.#failing = true;
        this.#o.log.warn({ err: describeError(err) }, 'PLEG relist failed');
      },
    });
    this.#job = job;
    return job.stopped;
  }

  /** Records a sandbox's IPs learnt elsewhere (RunPodSandbox's follow-up status), saving a call. */
  noteSandboxIps(sandboxId: string, ips: string[]): void {
    if (ips.length > 0) this.#sandboxIps.set(sandboxId, ips);
  }

  /** Asks for a relist as soon as possible (coalesced), e.g. after a sync changed something. */
  relistSoon(): void {
    this.#job?.trigger();
  }

  /** The cached view of one pod (empty when the runtime has nothing of it). */
  get(uid: string): ObservedPod {
    return this.#pods.get(uid) ?? emptyObservedPod(uid);
  }

  /** Every pod the runtime has something of. */
  all(): ReadonlyMap<string, ObservedPod> {
    return this.#pods;
  }

  /** Start time of the last completed relist. */
  get stamp(): number {
    return this.#stamp;
  }

  /** kubelet PLEG health: the last successful relist is recent. */
  healthy(): boolean {
    return this.#lastOk > 0 && this.#o.clock.now() - this.#lastOk < RELIST_THRESHOLD_MS;
  }

  /** Resolves once a relist that started after `after` has completed. */
  waitNewerThan(after: number, signal: AbortSignal): Promise<void> {
    if (this.#stamp > after) return Promise.resolve();
    this.relistSoon();
    return new Promise((resolve, reject) => {
      const w = { after, resolve: () => { signal.removeEventListener('abort', onAbort); resolve(); } };
      const onAbort = (): void => {
        this.#waiters = this.#waiters.filter((x) => x !== w);
        reject(signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(w);
    });
  }

  /**
   * The view of one pod from a relist or a refresh of that pod that started after `after`
   * (kubelet cache.GetNewerThan). When the cache has none, the pod alone is refreshed from CRI
   * at once rather than waiting for the next relist; should that refresh fail (the runtime is
   * away), this waits for a relist as before. Rejects only when `signal` aborts.
   */
  async getNewerThan(uid: string, after: number, signal: AbortSignal): Promise<ObservedPod> {
    if (Math.max(this.#stamp, this.#podStamps.get(uid) ?? 0) > after) return this.get(uid);
    try {
      await this.#refreshPod(uid, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      this.#o.log.debug({ podUID: uid, err: describeError(err) }, 'Pod refresh failed, waiting for a relist');
      await this.waitNewerThan(after, signal);
    }
    return this.get(uid);
  }

  /** One relist. Public for tests and for the agent's start-up (recovery reads the first relist). */
  async relist(stop: AbortSignal): Promise<void> {
    // One child signal per relist: the many CRI calls below hook onto it, not onto the long-lived one.
    const link = linkAbort(stop);
    try {
      await this.#relist(link.signal);
    } finally {
      link.dispose();
    }
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const started = this.#o.clock.now();
    const t0 = this.#o.clock.monotonic();
    const rt = this.#o.runtime;
    const filter = { labelSelector: { [MANAGED_BY]: 'true' } };
    const [sbs, cts] = await Promise.all([
      rt.listPodSandbox({ filter }, { signal }),
      rt.listContainers({ filter }, { signal }),
    ]);
    const { pods, liveSandboxes, liveContainers } = await this.#assemble(sbs.items, cts.containers, signal);
    for (const id of this.#sandboxIps.keys()) if (!liveSandboxes.has(id)) this.#sandboxIps.delete(id);
    for (const m of [this.#exited, this.#running]) for (const id of m.keys()) if (!liveContainers.has(id)) m.delete(id);

    // A pod refreshed alone after this relist started has a newer view than the one listed here.
    for (const [uid, at] of this.#podStamps) {
      if (at < started) {
        this.#podStamps.delete(uid);
        continue;
      }
      const fresher = this.#pods.get(uid);
      if (fresher) pods.set(uid, fresher);
      else pods.delete(uid);
    }
    // A pod whose view is the same as the cached one keeps the cached object: nothing to wake,
    // and the view just built is garbage at once (young, cheap to collect) instead of the cached
    // one being replaced every second.
    const changed: string[] = [];
    for (const [uid, p] of pods) {
      if (this.#podStamps.has(uid)) continue; // the refreshed view, already cached
      sortNewestFirst(p);
      const cached = this.#pods.get(uid);
      if (cached && sameObservedPod(cached, p)) pods.set(uid, cached);
      else changed.push(uid);
    }
    for (const uid of this.#pods.keys()) if (!pods.has(uid) && !this.#podStamps.has(uid)) changed.push(uid);
    this.#pods = pods;
    this.#stamp = started;
    this.#lastOk = this.#o.clock.now();
    this.#o.observeRelist?.((this.#o.clock.monotonic() - t0) / 1000);
    const ready = this.#waiters.filter((w) => started > w.after);
    this.#waiters = this.#waiters.filter((w) => started <= w.after);
    for (const w of ready) w.resolve();
    for (const uid of changed) this.#o.onPodChanged(uid);
    if (this.#failing) {
      this.#failing = false;
      this.#o.onRecovered?.();
    }
  }

  /**
   * Groups listed sandboxes and containers by pod UID, with the statuses the listing lacks. The
   * status calls hook onto a signal of their own: up to STATUS_CONCURRENCY of them listen for its
   * abort at once (each CRI call does), past node's warning threshold of 10 by design and bounded;
   * the caller's signal (a relist's, a pod worker's) gets one listener, removed when this ends.
   */
  async #assemble(sandboxes: CriSandbox[], containers: CriContainer[], caller: AbortSignal) {
    const link = linkAbort(caller);
    setMaxListeners(STATUS_CONCURRENCY, link.signal);
    try {
      return await this.#assembleOn(sandboxes, containers, link.signal);
    } finally {
      link.dispose();
    }
  }

  async #assembleOn(sandboxes: CriSandbox[], containers: CriContainer[], signal: AbortSignal) {
    const pods = new Map<string, ObservedPod>();
    const liveSandboxes = new Set<string>();
    // Status calls run STATUS_CONCURRENCY at a time: one slow answer must not hold up the others.
    let semaphore: Semaphore | undefined;
    const limit = (): Semaphore => (semaphore ??= new Semaphore(STATUS_CONCURRENCY));
    // What is cached (a sandbox's IPs, a container's unchanging status: every one of them on an
    // idle node) is taken as it is, without a slot, a closure or a promise per relist; only the
    // calls are awaited (a Promise.all over every pod's value made 60 promises a second at 30 pods).
    const calls: Array<Promise<void>> = [];
    const sbIps = sandboxes.map((s, i) => {
      const known = this.#sandboxIps.get(s.id);
      if (known || s.state !== 'SANDBOX_READY') return known;
      calls.push(limit().use(() => this.#sandboxStatusIps(s.id, signal)).then((ips) => void (sbIps[i] = ips)));
      return undefined;
    });
    if (calls.length > 0) await Promise.all(calls.splice(0));
    sandboxes.forEach((s, i) => {
      liveSandboxes.add(s.id);
      const sb = sandboxFromCri(s, s.state === 'SANDBOX_READY' ? (sbIps[i] ?? []) : []);
      if (!sb.uid) return;
      let p = pods.get(sb.uid);
      if (!p) pods.set(sb.uid, (p = emptyObservedPod(sb.uid, sb.name, sb.namespace)));
      p.sandboxes.push(sb);
    });
    const liveContainers = new Set<string>();
    const statuses = containers.map((c, i) => {
      const known = this.#cachedStatus(c.id, c.state);
      if (!known) calls.push(limit().use(() => this.#containerStatus(c.id, c.state, signal)).then((st) => void (statuses[i] = st)));
      return known;
    });
    if (calls.length > 0) await Promise.all(calls);
    containers.forEach((c, i) => {
      liveContainers.add(c.id);
      const oc = containerFromCri(c, statuses[i]);
      const uid = c.labels[POD_UID];
      if (!uid) return;
      let p = pods.get(uid);
      if (!p) pods.set(uid, (p = emptyObservedPod(uid, c.labels[POD_NAME] ?? '', c.labels[POD_NAMESPACE] ?? '')));
      p.containers.push(oc);
    });
    return { pods, liveSandboxes, liveContainers };
  }

  /** A ready sandbox's IPs from PodSandboxStatus, cached once known (or known to be none: host network). */
  async #sandboxStatusIps(id: string, signal: AbortSignal): Promise<string[]> {
    const cached = this.#sandboxIps.get(id);
    if (cached) return cached;
    const st = await this.#o.runtime.podSandboxStatus({ podSandboxId: id }, { signal }).catch((err: unknown) => {
      // No IPs this relist (not cached: asked again on the next one). A sandbox removed since
      // the list is no failure.
      if (!signal.aborted && !hasCode(err, 'ERR_NOT_FOUND')) this.#o.log.warn({ podSandboxId: id, err: describeError(err) }, 'PLEG: sandbox status failed');
      return undefined;
    });
    const net = st?.status?.network;
    const ips = net?.ip ? [net.ip, ...(net.additionalIps ?? []).map((x) => x.ip)] : [];
    if (ips.length > 0 || st?.status?.linux?.namespaces?.options?.network === 'NODE') this.#sandboxIps.set(id, ips);
    return ips;
  }

  /**
   * Lists one pod's sandboxes and containers (by its UID label) and replaces its cache entry,
   * stamped with the refresh's start. Does not wake its worker: the worker asked for it. A relist
   * that started later and already landed has the newer view and is kept.
   */
  async #refreshPod(uid: string, signal: AbortSignal): Promise<void> {
    const started = this.#o.clock.now();
    const rt = this.#o.runtime;
    const filter = { labelSelector: { [MANAGED_BY]: 'true', [POD_UID]: uid } };
    const [sbs, cts] = await Promise.all([rt.listPodSandbox({ filter }, { signal }), rt.listContainers({ filter }, { signal })]);
    const { pods } = await this.#assemble(sbs.items, cts.containers, signal);
    if (this.#stamp > started || (this.#podStamps.get(uid) ?? 0) > started) return;
    const p = pods.get(uid);
    if (p) this.#pods.set(uid, sortNewestFirst(p));
    else this.#pods.delete(uid);
    this.#podStamps.set(uid, started);
  }

  /** A status that cannot have changed: an exited container's, or a running one's while it still runs. */
  #cachedStatus(id: string, state: string): CriContainerStatus | undefined {
    return this.#exited.get(id) ?? (state === 'CONTAINER_RUNNING' ? this.#running.get(id) : undefined);
  }

  async #containerStatus(id: string, state: string, signal: AbortSignal): Promise<CriContainerStatus | undefined> {
    const cached = this.#cachedStatus(id, state);
    if (cached) return cached;
    const res = await this.#o.runtime.containerStatus({ containerId: id }, { signal }).catch((err: unknown) => {
      // The container keeps its last known status this relist; asked again on the next one. A
      // container removed since the list is no failure.
      if (!signal.aborted && !hasCode(err, 'ERR_NOT_FOUND')) this.#o.log.warn({ containerId: id, err: describeError(err) }, 'PLEG: container status failed');
      return undefined;
    });
    const st = res?.status ?? undefined;
    if (st?.state === 'CONTAINER_EXITED') {
      this.#exited.set(id, st);
      this.#running.delete(id);
    } else if (st?.state === 'CONTAINER_RUNNING') {
      this.#running.set(id, st);
    }
    return st;
  }
}
