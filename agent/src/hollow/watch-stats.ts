/**
 * Watch fan-out as the hollow nodes receive it: how many watches they hold open on the API server
 * and how many events those watches delivered. One WatchStats is shared by every node's client;
 * `nodelet hollow --stats-every` prints it for bench/density.
 */
import { ApiClient, type KubeObject, type ResourceType, type WatchEvent, type WatchOptions } from '@nodelet/api/agent';

export class WatchStats {
  /** Watches open now (a re-watch closes one and opens the next). */
  open = 0;
  /** Watches opened since start. */
  opened = 0;
  /** Events received on every watch (bookmarks and errors included). */
  events = 0;
}

/** An ApiClient whose watches are counted into `stats`; everything else is ApiClient's. */
export class CountingApiClient extends ApiClient {
  readonly #stats: WatchStats;

  constructor(opts: ConstructorParameters<typeof ApiClient>[0], stats: WatchStats) {
    super(opts);
    this.#stats = stats;
  }

  override watch<T extends KubeObject>(r: ResourceType<T>, o: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    const inner = super.watch(r, o);
    const stats = this.#stats;
    return {
      async *[Symbol.asyncIterator]() {
        stats.open++;
        stats.opened++;
        try {
          for await (const ev of inner) {
            stats.events++;
            yield ev;
          }
        } finally {
          stats.open--;
        }
      },
    };
  }
}
