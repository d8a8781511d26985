/**
 * A client bound to one resource and (optionally) one namespace: `client.resource(PODS, 'default')`.
 * A thin veneer over ApiClient so callers don't repeat resource and namespace on every call.
 */
import type { KubeList, KubeObject, Status, WatchEvent } from '../types/meta.js';
import type { ResourceType } from '../types/resources.js';
import type { ApiClient } from './api-client.js';
import type {
  CreateOptions,
  DeleteCallOptions,
  GetOptions,
  ListOptions,
  PatchOptions,
  UpdateOptions,
  WatchOptions,
} from './options.js';

type NoNs<O> = Omit<O, 'namespace'>;

export class ResourceClient<T extends KubeObject> {
  constructor(
    readonly client: ApiClient,
    readonly resource: ResourceType<T>,
    /** Unset = all namespaces for list/watch; writes then use the object's namespace. */
    readonly namespace?: string,
  ) {}

  /** The same resource in another namespace. */
  inNamespace(namespace: string): ResourceClient<T> {
    return new ResourceClient(this.client, this.resource, namespace);
  }

  get(name: string, o: NoNs<GetOptions> = {}): Promise<T> {
    return this.client.get(this.resource, name, { ...o, namespace: this.namespace });
  }

  list(o: NoNs<ListOptions> = {}): Promise<KubeList<T>> {
    return this.client.list(this.resource, { ...o, namespace: this.namespace });
  }

  listAll(o: NoNs<ListOptions> = {}): Promise<KubeList<T>> {
    return this.client.listAll(this.resource, { ...o, namespace: this.namespace });
  }

  create(obj: T, o: NoNs<CreateOptions> = {}): Promise<T> {
    return this.client.create(this.resource, obj, { ...o, namespace: this.namespace ?? obj.metadata?.namespace });
  }

  update(obj: T, o: NoNs<UpdateOptions> = {}): Promise<T> {
    return this.client.update(this.resource, obj, { ...o, namespace: this.namespace ?? obj.metadata?.namespace });
  }

  /** PUT …/status: only `.status` changes. */
  updateStatus(obj: T, o: NoNs<Omit<UpdateOptions, 'subresource'>> = {}): Promise<T> {
    return this.client.update(this.resource, obj, { ...o, namespace: this.namespace ?? obj.metadata?.namespace, subresource: 'status' });
  }

  patch(name: string, patch: unknown, o: NoNs<PatchOptions>): Promise<T> {
    return this.client.patch(this.resource, name, patch, { ...o, namespace: this.namespace });
  }

  /** PATCH …/status (the agent's pod status writes, node status). */
  patchStatus(name: string, patch: unknown, o: NoNs<Omit<PatchOptions, 'subresource'>>): Promise<T> {
    return this.client.patch(this.resource, name, patch, { ...o, namespace: this.namespace, subresource: 'status' });
  }

  delete(name: string, o: NoNs<DeleteCallOptions> = {}): Promise<T | Status> {
    return this.client.delete(this.resource, name, { ...o, namespace: this.namespace });
  }

  watch(o: NoNs<WatchOptions> = {}): AsyncIterable<WatchEvent<T>> {
    return this.client.watch(this.resource, { ...o, namespace: this.namespace });
  }
}
