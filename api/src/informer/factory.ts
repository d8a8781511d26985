/**
 * One informer per resource and selector for a whole process (client-go's SharedInformerFactory):
 * every reader of a kind subscribes to the same list+watch and cache. The controller manager uses
 * it directly; the agent names its informers on top of it (agent/src/source/informers.ts).
 *
 *   for(r, { namespace, fieldSelector }) ──▶ the informer of that key, made on first use
 *   start()  starts every informer made so far, and from then on each one as it is made
 *   close()  closes them all (their readers first); no informer is made after it
 */
import type { Clock, Logger } from '@nodelet/base';
import type { ApiClient } from '../client/api-client.js';
import type { KubeObject } from '../types/meta.js';
import type { ResourceType } from '../types/resources.js';
import { Informer } from './informer.js';

export interface InformerFactoryOptions {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
}

/** What selects an informer besides its resource. */
export interface InformerScope {
  /** One namespace; unset = all namespaces (or a cluster-scoped resource). */
  namespace?: string;
  fieldSelector?: string;
}

export class InformerFactory {
  readonly #o: InformerFactoryOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  #started = false;
  #closed?: Promise<void>;

  constructor(o: InformerFactoryOptions) {
    this.#o = o;
  }

  /** The informer of `r` in `scope`, created on first use (and started if the factory runs). */
  for<T extends KubeObject>(r: ResourceType<T>, scope: InformerScope = {}): Informer<T> {
    const key = scopeKey(r, scope);
    let inf = this.#informers.get(key) as Informer<T> | undefined;
    if (!inf) {
      if (this.#closed) throw new Error(`informer for ${r.plural} requested after the informers were closed`);
      inf = new Informer<T>({ client: this.#o.client, resource: r, namespace: scope.namespace, fieldSelector: scope.fieldSelector, clock: this.#o.clock, logger: this.#o.logger });
      this.#informers.set(key, inf as unknown as Informer<KubeObject>);
      if (this.#started) inf.start();
    }
    return inf;
  }

  /** Closes and forgets the informer of `r` in `scope` (a custom resource whose CRD is gone); handlers on it go with it. */
  async drop(r: ResourceType, scope: InformerScope = {}): Promise<void> {
    const key = scopeKey(r, scope);
    const inf = this.#informers.get(key);
    this.#informers.delete(key);
    await inf?.close();
  }

  /** Every informer created so far (a snapshot, to observe; they belong to this factory). */
  list(): Array<Informer<KubeObject>> {
    return [...this.#informers.values()];
  }

  /** Starts every informer made so far, and from now on each one as it is made. Idempotent. */
  start(): void {
    if (this.#started || this.#closed) return;
    this.#started = true;
    for (const i of this.#informers.values()) i.start();
  }

  /** Resolves once every informer made so far has listed. */
  async waitForSync(signal: AbortSignal): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
  }

  /** Closes every informer (their readers must be closed first). Idempotent. */
  close(): Promise<void> {
    this.#closed ??= Promise.all([...this.#informers.values()].map((i) => i.close())).then(() => undefined);
    return this.#closed;
  }
}

function scopeKey(r: ResourceType, scope: InformerScope): string {
  return `${r.plural}.${r.group}/${scope.namespace ?? ''}?${scope.fieldSelector ?? ''}`;
}
