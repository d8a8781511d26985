/**
 * The pods this node should run, merged from its sources (kubelet config/config.go PodConfig):
 *
 *   api   the shared informer of pods with spec.nodeName=<node> ─┐   (mirror pods are skipped:
 *         (list + watch, 410 → relist, backoff; @nodelet/api)     │    they only carry a static
 *   file  --pod-manifest-path, read every fileCheckFrequency ─────┤    pod's status for kubectl)
 *                                                                 ▼
 *                         wanted = api ∪ file ──▶ PodUpdate ──▶ pod workers (onUpdate)
 *
 *   api    added / changed ─▶ update (a deletionTimestamp requests termination with its grace)
 *          deleted, or gone at a relist ─▶ termination (deletionGracePeriodSeconds, else 0)
 *   file   new manifest (or an edit: a new UID) ─▶ update; file removed ─▶ termination
 *          (the pod's terminationGracePeriodSeconds)
 *
 * A source is *seen* once it delivered its first full set: the API informer's first list, the
 * manifest directory's first successful read. Only when every configured source has been seen
 * (kubelet's seenSources / `AllReady`) does `orphans()` name runtime pods that no source wants:
 * a restarted agent must not tear down running pods before it has heard from the API server.
 */
import { describeError, type Clock, type Logger } from '@nodelet/base';
import type { Informer, Pod } from '@nodelet/api/agent';
import type { PodUpdate } from '../podworkers/pod-worker.js';
import type { ObservedPod } from '../kubecontainer/observed.js';
import { readStaticPods } from './static-pods.js';
import { isMirrorPod } from '../kubecontainer/pod-update.js';

export interface PodConfigOptions {
  /** The pods bound to this node (SharedInformers.nodePods()); started here if needed, never closed. */
  pods: Informer<Pod>;
  nodeName: string;
  /** The static pod directory; unset = no file source. */
  staticPodPath?: string;
  fileCheckFrequencyMs: number;
  clock: Clock;
  log: Logger;
  /** Receives every change, in order (PodWorkers.update). Must not block. */
  onUpdate(u: PodUpdate): void;
}

export class PodConfig {
  readonly #o: PodConfigOptions;
  readonly #api = new Map<string, Pod>();
  readonly #static = new Map<string, Pod>();
  #staticSeen = false;

  constructor(o: PodConfigOptions) {
    this.#o = o;
  }

  /**
   * Feeds the sources into `onUpdate` until `signal` aborts; resolves once stopped (the
   * manifest read in flight has ended and the informer handlers are removed).
   */
  async run(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const informer = this.#o.pods;
    const sub = informer.on({ onAdd: (p) => this.#apiUpsert(p), onUpdate: (_old, p) => this.#apiUpsert(p), onDelete: (p) => this.#apiRemove(p) });
    try {
      informer.start();
      const dir = this.#o.staticPodPath;
      const files = dir
        ? this.#o.clock.every(this.#o.fileCheckFrequencyMs, () => this.#readStatic(dir), {
            signal,
            immediate: true,
            onError: (err) => this.#o.log.warn({ dir, err: describeError(err) }, 'Static pod directory read failed'),
          })
        : undefined;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await files?.stopped;
    } finally {
      sub.dispose();
    }
  }

  /** Every configured source has delivered its first full set (kubelet `sourcesReady.AllReady`). */
  get sourcesReady(): boolean {
    return this.#o.pods.hasSynced() && (!this.#o.staticPodPath || this.#staticSeen);
  }

  /** Whether the API has this pod (false for static pods, orphans and pods deleted from the API). */
  inApi(uid: string): boolean {
    return this.#api.has(uid);
  }

  /** Whether a static pod's manifest is still in the directory. */
  isStaticWanted(uid: string): boolean {
    return this.#static.has(uid);
  }

  /** Whether any source wants the pod. */
  wants(uid: string): boolean {
    return this.#api.has(uid) || this.#static.has(uid);
  }

  /** The UIDs some source wants. */
  wanted(): Set<string> {
    return new Set([...this.#api.keys(), ...this.#static.keys()]);
  }

  /** A wanted pod by UID (API or static). */
  get(uid: string): Pod | undefined {
    return this.#api.get(uid) ?? this.#static.get(uid);
  }

  /** A wanted pod by namespace and name (the node API's lookups). */
  find(namespace: string, name: string): Pod | undefined {
    for (const m of [this.#api, this.#static]) {
      for (const p of m.values()) if (p.metadata.namespace === namespace && p.metadata.name === name) return p;
    }
    return undefined;
  }

  /**
   * Runtime pods that no source wants and no worker handles, holding anything (a sandbox or a
   * container): kubelet HandlePodCleanups' orphans. Empty until every source has been seen.
   */
  orphans(runtime: Iterable<ObservedPod>, hasWorker: (uid: string) => boolean): ObservedPod[] {
    if (!this.sourcesReady) return [];
    const out: ObservedPod[] = [];
    for (const p of runtime) {
      if (this.wants(p.uid) || hasWorker(p.uid)) continue;
      if (p.sandboxes.length > 0 || p.containers.length > 0) out.push(p);
    }
    return out;
  }

  #apiUpsert(pod: Pod): void {
    if (isMirrorPod(pod)) return;
    this.#api.set(pod.metadata.uid!, pod);
    const deleting = !!pod.metadata.deletionTimestamp;
    this.#o.onUpdate({ pod, terminationRequested: deleting, gracePeriodS: deleting ? (pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds) : undefined });
  }

  #apiRemove(pod: Pod): void {
    if (isMirrorPod(pod)) return;
    this.#api.delete(pod.metadata.uid!);
    this.#o.onUpdate({ pod, terminationRequested: true, gracePeriodS: pod.metadata.deletionGracePeriodSeconds ?? 0 });
  }

  async #readStatic(dir: string): Promise<void> {
    const pods = await readStaticPods(dir, this.#o.nodeName, this.#o.log);
    const next = new Map(pods.map((p) => [p.metadata.uid!, p]));
    for (const [uid, p] of this.#static) {
      if (next.has(uid)) continue;
      this.#static.delete(uid);
      this.#o.onUpdate({ pod: p, terminationRequested: true, gracePeriodS: p.spec?.terminationGracePeriodSeconds });
    }
    for (const [uid, p] of next) {
      if (!this.#static.has(uid)) this.#o.onUpdate({ pod: p });
      this.#static.set(uid, p);
    }
    this.#staticSeen = true;
  }
}
