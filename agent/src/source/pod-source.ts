/**
 * The API pod source (kubelet config/apiserver.go): list + watch of pods with
 * `spec.nodeName=<node>`. Watches resume from the last resourceVersion (bookmarks keep it fresh);
 * 410 Expired → relist; a dropped connection → reconnect with backoff (0.5 s doubling to 30 s).
 *
 *   list ──▶ onSync(all pods)  ──▶ watch(rv) ──ADDED/MODIFIED──▶ onUpsert(pod)
 *                                           ──DELETED────────▶ onRemove(pod)
 *                                           ──410 / error────▶ relist / re-watch
 */
import { Backoff, delay, describeError, isAbortError, type Clock, type Logger } from '@nodelet/base';
import { PODS, type ApiClient, type Pod, type Status } from '@nodelet/api';

export interface PodSourceHandlers {
  /** The full set after a (re)list: pods missing from it were deleted while we were not watching. */
  onSync(pods: Pod[]): void;
  onUpsert(pod: Pod): void;
  onRemove(pod: Pod): void;
}

export interface ApiPodSourceOptions {
  api: ApiClient;
  nodeName: string;
  clock: Clock;
  log: Logger;
  random?: () => number;
}

export class ApiPodSource {
  readonly #o: ApiPodSourceOptions;
  #synced = false;

  constructor(o: ApiPodSourceOptions) {
    this.#o = o;
  }

  /** True after the first successful list. */
  get synced(): boolean {
    return this.#synced;
  }

  async run(signal: AbortSignal, h: PodSourceHandlers): Promise<void> {
    const backoff = new Backoff({ initialMs: 500, maxMs: 30_000, resetAfterMs: 60_000, clock: this.#o.clock });
    const fieldSelector = `spec.nodeName=${this.#o.nodeName}`;
    let rv: string | undefined;
    while (!signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await this.#o.api.listAll(PODS, { fieldSelector, signal });
          rv = list.metadata.resourceVersion;
          h.onSync(list.items);
          this.#synced = true;
        }
        const timeoutSeconds = 300 + Math.floor((this.#o.random ?? Math.random)() * 300);
        for await (const ev of this.#o.api.watch(PODS, { fieldSelector, resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds, signal })) {
          if (ev.type === 'ERROR') {
            const st = ev.object as unknown as Status;
            this.#o.log.info({ code: st.code, reason: st.reason }, 'Pod watch expired, relisting');
            if (st.code === 410) rv = undefined;
            else await delay(backoff.next(), signal);
            break;
          }
          const pod = ev.object as Pod;
          rv = pod.metadata.resourceVersion ?? rv;
          if (ev.type === 'BOOKMARK') continue;
          if (ev.type === 'DELETED') h.onRemove(pod);
          else h.onUpsert(pod);
          backoff.reset();
        }
      } catch (err) {
        if (signal.aborted || isAbortError(err)) return;
        const wait = backoff.next();
        this.#o.log.warn({ err: describeError(err), retryInMs: wait }, 'Pod watch failed');
        await delay(wait, signal).catch(() => undefined);
      }
    }
  }
}
