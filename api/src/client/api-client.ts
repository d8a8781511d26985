/**
 * ApiClient: typed REST calls against a Kubernetes(-compatible) API server. Stateless apart from
 * the keep-alive agent; safe to share between components. Every call takes an AbortSignal; errors
 * are AgentErrors translated in ./errors.ts (`hasCode(err, 'ERR_NOT_FOUND')`, `statusOf(err)`).
 */
import type { Readable } from 'node:stream';
import { AgentError, hasCode, linkAbort } from '@nodelet/base';
import type { DeleteOptions, KubeList, KubeObject, Status, WatchEvent } from '../types/meta.js';
import { apiVersionOf, resourcePath, type ResourceType } from '../types/resources.js';
import type { Clock } from '@nodelet/base';
import { createApiTransport, type ApiTransport } from './failover-transport.js';
import type { Transport, TransportOptions } from './transport.js';
import { parseJsonLines } from './ndjson.js';
import { parseWatchFrames } from '../protobuf/decode-stream.js';
import { decodeListBody, isProtobufReply, WirePreference } from './wire.js';
import {
  PATCH_CONTENT_TYPES,
  type CreateOptions,
  type DeleteCallOptions,
  type GetOptions,
  type ListOptions,
  type PatchOptions,
  type RawOptions,
  type UpdateOptions,
  type WatchOptions,
  type WriteOptions,
} from './options.js';
import { ResourceClient } from './resource-client.js';

export interface ApiClientOptions extends TransportOptions {
  /** How long past a watch's `timeoutSeconds` a silent watch may stay open before the client ends it (default 30 s). */
  watchDeadlineGraceMs?: number;
  /**
   * Ask for Kubernetes protobuf on list and watch, JSON as the fallback (kubelet's
   * `application/vnd.kubernetes.protobuf, application/json`); replies are decoded by their
   * Content-Type. Default false (JSON only). See ./wire.ts.
   */
  protobuf?: boolean;
  /**
   * More API servers of the same control plane, after `server` in order of preference. With
   * two or more distinct URLs the client talks to one at a time and fails over when it cannot
   * reach it (failover-transport.ts, docs/ha.md "Agent fail-over").
   */
  servers?: readonly string[];
  /** Period of the `/readyz` probe that brings a failed-over client back to `server` (default 5 s). */
  probeIntervalMs?: number;
  /** Clock of that probe (default the system clock). */
  clock?: Clock;
}

type Query = Record<string, string | number | boolean | undefined>;


export class ApiClient {
  readonly #t: ApiTransport;
  readonly #watchGraceMs: number;
  readonly #wire: WirePreference;

  constructor(opts: ApiClientOptions) {
    this.#t = createApiTransport(opts);
    this.#watchGraceMs = opts.watchDeadlineGraceMs ?? 30_000;
    this.#wire = new WirePreference(opts.protobuf ?? false);
  }

  /** The server URL this client talks to now (with several servers, the current one). */
  get server(): string {
    return this.#t.server.href;
  }

  /** A client bound to one resource (and optionally one namespace). */
  resource<T extends KubeObject>(r: ResourceType<T>, namespace?: string): ResourceClient<T> {
    return new ResourceClient(this, r, namespace);
  }

  /** GET one object (or its subresource: `get<Deployment, Scale>(DEPLOYMENTS, 'web', { subresource: 'scale' })`). */
  async get<T extends KubeObject, R extends KubeObject = T>(r: ResourceType<T>, name: string, o: GetOptions = {}): Promise<R> {
    const path = resourcePath({ ...r, namespace: nsFor(r, o.namespace), name, subresource: o.subresource });
    return this.#json<R>({ method: 'GET', path, query: { resourceVersion: o.resourceVersion }, signal: o.signal, timeoutMs: o.timeoutMs });
  }

  /** One page of a list. Use {@link listAll} to follow `continue` tokens. */
  async list<T extends KubeObject>(r: ResourceType<T>, o: ListOptions = {}): Promise<KubeList<T>> {
    const path = resourcePath({ ...r, namespace: nsFor(r, o.namespace, true) });
    const query: Query = {
      labelSelector: o.labelSelector || undefined,
      fieldSelector: o.fieldSelector || undefined,
      limit: o.limit,
      continue: o.continue || undefined,
      resourceVersion: o.resourceVersion,
      resourceVersionMatch: o.resourceVersionMatch,
    };
    const key = resourceKey(r);
    const accept = this.#wire.acceptFor(key);
    const res = await this.#t.request({ method: 'GET', path, query, signal: o.signal, timeoutMs: o.timeoutMs, accept });
    let list: KubeList<T>;
    try {
      list = decodeListBody<KubeList<T>>(res.headers, res.body, `GET ${path}`);
    } catch (err) {
      if (!accept || !hasCode(err, 'ERR_UNIMPLEMENTED')) throw err;
      this.#wire.useJson(key);
      return this.list(r, o);
    }
    list.items ??= [];
    list.metadata ??= {};
    return list;
  }

  /**
   * Every page of a list, at the first page's resourceVersion (the server keeps one snapshot
   * across pages). `limit` is the page size (default 500, like kubectl).
   */
  async listAll<T extends KubeObject>(r: ResourceType<T>, o: ListOptions = {}): Promise<KubeList<T>> {
    const first = await this.list(r, { ...o, limit: o.limit ?? 500 });
    let next = first.metadata.continue;
    while (next) {
      const page = await this.list(r, { ...o, limit: o.limit ?? 500, continue: next, resourceVersion: undefined, resourceVersionMatch: undefined });
      first.items.push(...page.items);
      next = page.metadata.continue;
    }
    first.metadata = { resourceVersion: first.metadata.resourceVersion };
    return first;
  }

  async create<T extends KubeObject>(r: ResourceType<T>, obj: T, o?: CreateOptions): Promise<T>;
  async create<B extends KubeObject, R extends KubeObject = B>(r: ResourceType, obj: B, o: CreateOptions & { subresource: string }): Promise<R>;
  async create(r: ResourceType, obj: KubeObject, o: CreateOptions = {}): Promise<KubeObject> {
    const namespace = nsFor(r, o.namespace ?? obj.metadata?.namespace);
    const path = resourcePath({ ...r, namespace, name: o.name, subresource: o.subresource });
    const body = o.subresource ? obj : withTypeMeta(r, obj);
    return this.#json({ method: 'POST', path, query: writeQuery(o), body, signal: o.signal, timeoutMs: o.timeoutMs });
  }

  /** PUT. A set `metadata.resourceVersion` makes it conditional (stale → ERR_CONFLICT). */
  async update<T extends KubeObject>(r: ResourceType<T>, obj: T, o: UpdateOptions = {}): Promise<T> {
    const name = obj.metadata?.name;
    if (!name) throw new AgentError('ERR_INVALID_ARGUMENT', `cannot update a ${r.kind} without metadata.name`);
    const path = resourcePath({ ...r, namespace: nsFor(r, o.namespace ?? obj.metadata.namespace), name, subresource: o.subresource });
    return this.#json<T>({ method: 'PUT', path, query: writeQuery(o), body: withTypeMeta(r, obj), signal: o.signal, timeoutMs: o.timeoutMs });
  }

  /**
   * PATCH with one of the four Kubernetes patch types. `apply` (server-side apply) needs a
   * `fieldManager`. The reply type is the patched resource (or `R` for a subresource like scale).
   */
  async patch<T extends KubeObject, R extends KubeObject = T>(r: ResourceType<T>, name: string, patch: unknown, o: PatchOptions): Promise<R> {
    if (o.type === 'apply' && !o.fieldManager) {
      throw new AgentError('ERR_INVALID_ARGUMENT', 'server-side apply needs a fieldManager');
    }
    if (o.type === 'json' && !Array.isArray(patch)) {
      throw new AgentError('ERR_INVALID_ARGUMENT', 'a JSON patch must be an array of operations');
    }
    const path = resourcePath({ ...r, namespace: nsFor(r, o.namespace), name, subresource: o.subresource });
    const query: Query = { ...writeQuery(o), force: o.type === 'apply' && o.force !== undefined ? o.force : undefined };
    return this.#json<R>({ method: 'PATCH', path, query, body: patch, contentType: PATCH_CONTENT_TYPES[o.type], signal: o.signal, timeoutMs: o.timeoutMs });
  }

  /**
   * DELETE. Pods with a grace period come back as the object with `deletionTimestamp` set;
   * most resources reply with a Success Status.
   */
  async delete<T extends KubeObject>(r: ResourceType<T>, name: string, o: DeleteCallOptions = {}): Promise<T | Status> {
    const path = resourcePath({ ...r, namespace: nsFor(r, o.namespace), name });
    const body: DeleteOptions = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (o.propagationPolicy) body.propagationPolicy = o.propagationPolicy;
    if (o.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
    if (o.preconditions) body.preconditions = o.preconditions;
    if (o.dryRun) body.dryRun = ['All'];
    return this.#json<T | Status>({ method: 'DELETE', path, body, signal: o.signal, timeoutMs: o.timeoutMs });
  }

  /**
   * Watches a collection. The iterable yields events until the server ends the watch
   * (timeoutSeconds, restart), `signal` aborts, or the consumer stops iterating (which closes
   * the connection). ERROR events (410 Expired after compaction) are yielded, not thrown; the
   * Informer turns them into a relist. A dropped connection ends the iteration with ERR_UNAVAILABLE.
   */
  watch<T extends KubeObject>(r: ResourceType<T>, o: WatchOptions = {}): AsyncIterable<WatchEvent<T>> {
    const path = resourcePath({ ...r, namespace: nsFor(r, o.namespace, true) });
    const query: Query = {
      watch: 'true',
      resourceVersion: o.resourceVersion,
      allowWatchBookmarks: o.allowWatchBookmarks ? 'true' : undefined,
      timeoutSeconds: o.timeoutSeconds,
      labelSelector: o.labelSelector || undefined,
      fieldSelector: o.fieldSelector || undefined,
    };
    const t = this.#t;
    const graceMs = this.#watchGraceMs;
    const wire = this.#wire;
    const key = resourceKey(r);
    return {
      async *[Symbol.asyncIterator]() {
        // A half-open connection sends nothing, forever: past the server's own deadline (plus
        // grace) we end the watch as if the server had, and the caller re-watches.
        const deadline = o.timeoutSeconds ? linkAbort(o.signal, o.timeoutSeconds * 1000 + graceMs) : undefined;
        const signal = deadline?.signal ?? o.signal;
        try {
          const accept = wire.acceptFor(key);
          const res = await t.stream({ method: 'GET', path, query, signal, timeoutMs: o.timeoutMs, accept });
          const body = res.body as AsyncIterable<Buffer>;
          try {
            const events = isProtobufReply(res.headers) ? parseWatchFrames(body, `watch ${path}`) : parseJsonLines(body, `watch ${path}`);
            for await (const v of events) {
              yield toWatchEvent<T>(v, path);
            }
          } catch (err) {
            if (o.signal?.aborted) throw o.signal.reason instanceof Error ? o.signal.reason : err;
            if (deadline?.signal.aborted) return;
            if (accept && hasCode(err, 'ERR_UNIMPLEMENTED')) {
              // An object our protobuf tables cannot carry: JSON from now on; the caller re-watches from its last RV.
              wire.useJson(key);
              throw new AgentError('ERR_UNAVAILABLE', `watch ${path}: switching to JSON`, { cause: err, retryable: true });
            }
            if (err instanceof AgentError) throw err;
            throw new AgentError('ERR_UNAVAILABLE', `watch ${path}: connection to API server lost`, { cause: err, retryable: true });
          } finally {
            res.body.destroy();
          }
        } finally {
          deadline?.dispose();
        }
      },
    };
  }

  /** GET of any path, buffered (e.g. `/version`, `pods/<name>/log` without follow). */
  async getRaw(path: string, o: RawOptions = {}): Promise<Buffer> {
    const res = await this.#t.request({ method: 'GET', path, query: o.query, accept: o.accept ?? '*/*', signal: o.signal, timeoutMs: o.timeoutMs });
    return res.body;
  }

  /** GET of any path as a stream (e.g. `pods/<name>/log?follow=true`). Destroy it or abort `signal` when done. */
  async stream(path: string, o: RawOptions = {}): Promise<Readable> {
    const res = await this.#t.stream({ method: 'GET', path, query: o.query, accept: o.accept ?? '*/*', signal: o.signal, timeoutMs: o.timeoutMs });
    return res.body;
  }

  /**
   * Uses `token` from the next request on (the agent after rotating its node credential).
   * Streams already open keep the token they were opened with.
   */
  setToken(token: string): void {
    this.#t.setToken(token);
  }

  /** Re-reads the kubeconfig's `tokenFile` on the next request instead of within a minute. */
  reloadToken(): void {
    this.#t.reloadToken();
  }

  /** Closes every socket (in-flight requests and watches fail with ERR_UNAVAILABLE); later calls fail. Idempotent. Close informers first. */
  close(): void {
    this.#t.close();
  }

  async #json<T>(req: Parameters<Transport['request']>[0]): Promise<T> {
    const res = await this.#t.request(req);
    try {
      return JSON.parse(res.body.toString('utf8')) as T;
    } catch (err) {
      throw new AgentError('ERR_INTERNAL', `${req.method} ${req.path}: API server sent a reply that is not JSON`, { cause: err });
    }
  }
}

function resourceKey(r: ResourceType): string {
  return `${r.group}/${r.version}/${r.plural}`;
}

function nsFor(r: ResourceType, namespace: string | undefined, allowAll = false): string | undefined {
  if (!r.namespaced) return undefined;
  if (namespace) return namespace;
  if (allowAll) return undefined;
  throw new AgentError('ERR_INVALID_ARGUMENT', `${r.plural} are namespaced: pass a namespace`);
}

function writeQuery(o: WriteOptions): Query {
  return {
    fieldManager: o.fieldManager,
    dryRun: o.dryRun ? 'All' : undefined,
    fieldValidation: o.fieldValidation,
  };
}

function withTypeMeta<T extends KubeObject>(r: ResourceType, obj: T): T {
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(r), kind: obj.kind ?? r.kind };
}

const WATCH_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

function toWatchEvent<T extends KubeObject>(v: unknown, path: string): WatchEvent<T> {
  const e = v as { type?: unknown; object?: unknown };
  if (typeof e !== 'object' || e === null || typeof e.type !== 'string' || !WATCH_TYPES.has(e.type) || typeof e.object !== 'object' || e.object === null) {
    throw new AgentError('ERR_UNAVAILABLE', `watch ${path}: unexpected watch event from API server`, { retryable: true });
  }
  return e as WatchEvent<T>;
}
