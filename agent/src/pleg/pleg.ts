/**
 * PLEG: relists sandboxes and containers from CRI every second (containerd 1.6 has no
 * GetContainerEvents), keeps the per-pod runtime cache, and wakes the workers of pods that changed
 * (kubelet pleg/generic.go + container/cache.go).
 *
 *   relist ──▶ cache (uid → ObservedPod, stamped with the relist start time)
 *          └─▶ onPodChanged(uid) for every pod whose view differs
 *   worker ──▶ waitNewerThan(lastSync) then get(uid)     (never acts on state older than its last sync)
 *
 * Statuses that cannot change are cached by ID: an exited container's exit code and times, a
 * sandbox's IPs. Only sandboxes/containers the agent labelled are listed (foreign ones are left alone).
 */
import { Semaphore, describeError, linkAbort, type Clock, type Logger, type PeriodicJob } from '@nodelet/base';
import type { CriContainerStatus, RuntimeService } from '../runtime/cri.js';
import { MANAGED_BY } from '../runtime/labels.js';
import {
  containerFromCri,
  emptyObservedPod,
  sandboxFromCri,
  sortNewestFirst,
  type ObservedPod,
} from '../runtime/observed.js';

export interface PlegOptions {
  runtime: RuntimeService;
  clock: Clock;
  log: Logger;
  periodMs?: number;
  onPodChanged(uid: string): void;
  /** Seconds one relist took (kubelet_pleg_relist_duration_seconds). */
  observeRelist?(seconds: number): void;
}

/** kubelet `genericPlegRelistThreshold`: a relist older than this makes the node unhealthy. */
const RELIST_THRESHOLD_MS = 3 * 60_000;
const STATUS_CONCURRENCY = 16;

export class Pleg {
  readonly #o: PlegOptions;
  #job?: PeriodicJob;
  #pods = new Map<string, ObservedPod>();
  #fingerprints = new Map<string, string>();
  readonly #exited = new Map<string, CriContainerStatus>();
  readonly #running = new Map<string, CriContainerStatus>();
  readonly #sandboxIps = new Map<string, string[]>();
  /** Clock time at which the last completed relist started (0 = none yet). */
  #stamp = 0;
  #lastOk = 0;
  #waiters: Array<{ after: number; resolve: () => void }> = [];

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
      onError: (err) => this.#o.log.warn({ err: describeError(err) }, 'PLEG relist failed'),
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
    const pods = new Map<string, ObservedPod>();
    const liveSandboxes = new Set<string>();
    // Status calls run STATUS_CONCURRENCY at a time: one slow answer must not hold up the others.
    const limit = new Semaphore(STATUS_CONCURRENCY);
    const sbIps = await Promise.all(
      sbs.items.map((s) =>
        limit.use(async () => {
          let ips = this.#sandboxIps.get(s.id);
          if (!ips && s.state === 'SANDBOX_READY') {
            const st = await rt.podSandboxStatus({ podSandboxId: s.id }, { signal }).catch(() => undefined);
            const net = st?.status?.network;
            ips = net?.ip ? [net.ip, ...(net.additionalIps ?? []).map((x) => x.ip)] : [];
            if (ips.length > 0 || st?.status?.linux?.namespaces?.options?.network === 'NODE') this.#sandboxIps.set(s.id, ips);
          }
          return ips;
        }),
      ),
    );
    sbs.items.forEach((s, i) => {
      liveSandboxes.add(s.id);
      const sb = sandboxFromCri(s, s.state === 'SANDBOX_READY' ? (sbIps[i] ?? []) : []);
      if (!sb.uid) return;
      let p = pods.get(sb.uid);
      if (!p) pods.set(sb.uid, (p = emptyObservedPod(sb.uid, sb.name, sb.namespace)));
      p.sandboxes.push(sb);
    });
    const liveContainers = new Set<string>();
    const statuses = await Promise.all(cts.containers.map((c) => limit.use(() => this.#containerStatus(c.id, c.state, signal))));
    cts.containers.forEach((c, i) => {
      liveContainers.add(c.id);
      const oc = containerFromCri(c, statuses[i]);
      const uid = c.labels['io.kubernetes.pod.uid'];
      if (!uid) return;
      let p = pods.get(uid);
      if (!p) pods.set(uid, (p = emptyObservedPod(uid, c.labels['io.kubernetes.pod.name'] ?? '', c.labels['io.kubernetes.pod.namespace'] ?? '')));
      p.containers.push(oc);
    });
    for (const id of this.#sandboxIps.keys()) if (!liveSandboxes.has(id)) this.#sandboxIps.delete(id);
    for (const m of [this.#exited, this.#running]) for (const id of m.keys()) if (!liveContainers.has(id)) m.delete(id);

    const changed: string[] = [];
    const fingerprints = new Map<string, string>();
    for (const [uid, p] of pods) {
      sortNewestFirst(p);
      const fp = JSON.stringify(p);
      fingerprints.set(uid, fp);
      if (this.#fingerprints.get(uid) !== fp) changed.push(uid);
    }
    for (const uid of this.#fingerprints.keys()) if (!pods.has(uid)) changed.push(uid);
    this.#pods = pods;
    this.#fingerprints = fingerprints;
    this.#stamp = started;
    this.#lastOk = this.#o.clock.now();
    this.#o.observeRelist?.((this.#o.clock.monotonic() - t0) / 1000);
    const ready = this.#waiters.filter((w) => started > w.after);
    this.#waiters = this.#waiters.filter((w) => started <= w.after);
    for (const w of ready) w.resolve();
    for (const uid of changed) this.#o.onPodChanged(uid);
  }

  async #containerStatus(id: string, state: string, signal: AbortSignal): Promise<CriContainerStatus | undefined> {
    const done = this.#exited.get(id);
    if (done) return done;
    const run = this.#running.get(id);
    if (run && state === 'CONTAINER_RUNNING') return run;
    const res = await this.#o.runtime.containerStatus({ containerId: id }, { signal }).catch(() => undefined);
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
