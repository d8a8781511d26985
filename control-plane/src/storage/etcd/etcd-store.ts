import { AgentError, hasCode, noopLogger, type Disposable, type Logger } from '@nodelet/base';
import { CompareResult, CompareTarget, Etcd3, type ICompare, type IKeyValue, type IRangeRequest } from 'etcd3';
import { startCompactor, type CompactorOptions } from '../compactor.js';
import { checkKey, checkRevision, prefixRangeEnd } from '../keys.js';
import type { KeyValue, ListOptions, ListResult, Store, WatchEvent, WatchOptions } from '../types.js';
import { isCompactedError, toStorageError } from './etcd-errors.js';
import { closedError, etcdWatch } from './etcd-watch.js';

export interface EtcdStoreOptions {
  /** Client URLs or host:port pairs, e.g. `['http://127.0.0.1:2379']`. */
  endpoints: string[];
  /** Prepended to every key (isolates tests or clusters sharing one etcd). Default none. */
  prefix?: string;
  logger?: Logger;
  /**
   * TLS for `https://` endpoints: the CA that signed etcd's serving certificate and an optional
   * client certificate (etcd's --client-cert-auth). Without it, https uses the system roots.
   */
  tls?: { ca: Uint8Array; cert?: Uint8Array; key?: Uint8Array };
  /** Per-request deadline. Default 10 s. */
  requestTimeoutMs?: number;
  compactor?: CompactorOptions;
}

/**
 * A store on etcd v3 with kube-apiserver's transaction shapes: create `If(mod==0) Put`, update
 * `If(mod==rev) Put Else Range`, delete guarded the same way. Revisions are etcd's.
 */
export function createEtcdStore(opts: EtcdStoreOptions): Store {
  return new EtcdStore(opts);
}

const ZERO = Buffer.from([0]);

class EtcdStore implements Store {
  readonly #client: Etcd3;
  readonly #prefix: Buffer;
  readonly #endpoints: readonly string[];
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #watches = new Set<(err: unknown) => void>();
  readonly #compactor: Disposable | undefined;
  /** Highest revision known to be compacted; compaction only moves forward. */
  #compactedHint = 0;
  #closed = false;

  constructor(opts: EtcdStoreOptions) {
    if (opts.endpoints.length === 0) throw new AgentError('ERR_INVALID_ARGUMENT', 'etcd store needs at least one endpoint');
    this.#endpoints = opts.endpoints;
    const credentials = opts.tls && {
      rootCertificate: Buffer.from(opts.tls.ca),
      ...(opts.tls.cert && opts.tls.key ? { certChain: Buffer.from(opts.tls.cert), privateKey: Buffer.from(opts.tls.key) } : {}),
    };
    this.#client = new Etcd3({ hosts: [...opts.endpoints], dialTimeout: 5000, ...(credentials ? { credentials } : {}) });
    this.#prefix = Buffer.from(opts.prefix ?? '', 'utf8');
    this.#timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.#log = (opts.logger ?? noopLogger).child({ component: 'storage-etcd' });
    this.#compactor = opts.compactor ? startCompactor(this, { ...opts.compactor, logger: this.#log }) : undefined;
  }

  async get(key: string, opts?: { signal?: AbortSignal }): Promise<KeyValue | undefined> {
    checkKey(key);
    const res = await this.#call(`get "${key}"`, (o) => this.#client.kv.range({ key: this.#full(key) }, o), opts?.signal);
    return res.kvs[0] && this.#toKv(res.kvs[0]);
  }

  async list(prefix: string, opts: ListOptions & { signal?: AbortSignal } = {}): Promise<ListResult> {
    if (opts.revision !== undefined) checkRevision('revision', opts.revision);
    const limit = opts.limit ?? 0;
    checkRevision('limit', limit);
    const start = opts.startAfter !== undefined ? Buffer.concat([this.#full(opts.startAfter), ZERO]) : this.#full(prefix);
    const req: IRangeRequest = { key: start, range_end: this.#rangeEnd(prefix), revision: opts.revision ?? 0, limit };
    const res = await this.#call(`list "${prefix}"`, (o) => this.#client.kv.range(req, o), opts.signal);
    const items = res.kvs.map((kv) => this.#toKv(kv));
    const result: ListResult = { items, revision: opts.revision || Number(res.header.revision), more: res.more };
    if (res.more) result.remaining = Number(res.count) - items.length;
    return result;
  }

  async count(prefix: string): Promise<number> {
    const req: IRangeRequest = { key: this.#full(prefix), range_end: this.#rangeEnd(prefix), count_only: true };
    const res = await this.#call(`count "${prefix}"`, (o) => this.#client.kv.range(req, o));
    return Number(res.count);
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    checkKey(key);
    const k = this.#full(key);
    const res = await this.#call(`create "${key}"`, (o) =>
      this.#client.kv.txn(
        {
          compare: [{ key: k, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: 0 }],
          success: [{ request_put: { key: k, value: Buffer.from(value) } }],
        },
        o,
      ),
    );
    if (!res.succeeded) throw new AgentError('ERR_ALREADY_EXISTS', `key "${key}" already exists`);
    return Number(res.header.revision);
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    checkKey(key);
    checkRevision('expectedRevision', expectedRevision);
    const k = this.#full(key);
    const res = await this.#call(`update "${key}"`, (o) =>
      this.#client.kv.txn(
        { compare: this.#guard(k, expectedRevision), success: [{ request_put: { key: k, value: Buffer.from(value) } }], failure: [{ request_range: { key: k } }] },
        o,
      ),
    );
    if (!res.succeeded) this.#guardFailed(key, expectedRevision, res.responses[0]?.response_range.kvs[0]);
    return Number(res.header.revision);
  }

  async delete(key: string, expectedRevision?: number): Promise<{ revision: number; kv: KeyValue }> {
    checkKey(key);
    if (expectedRevision !== undefined) checkRevision('expectedRevision', expectedRevision);
    const k = this.#full(key);
    const res = await this.#call(`delete "${key}"`, (o) =>
      this.#client.kv.txn(
        {
          compare: this.#guard(k, expectedRevision),
          success: [{ request_delete_range: { key: k, prev_kv: true } }],
          failure: [{ request_range: { key: k } }],
        },
        o,
      ),
    );
    if (!res.succeeded) this.#guardFailed(key, expectedRevision, res.responses[0]?.response_range.kvs[0]);
    const prev = res.responses[0]?.response_delete_range.prev_kvs[0];
    if (!prev) throw new AgentError('ERR_NOT_FOUND', `key "${key}" not found`);
    return { revision: Number(res.header.revision), kv: this.#toKv(prev) };
  }

  watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent> {
    if (this.#closed) throw closedError();
    checkRevision('afterRevision', opts.afterRevision);
    return etcdWatch({
      client: this.#client,
      prefix: this.#full(prefix),
      afterRevision: opts.afterRevision,
      signal: opts.signal,
      toKv: (kv) => this.#toKv(kv),
      keyOf: (raw) => raw.subarray(this.#prefix.length).toString('utf8'),
      explainCancel: (err, next) => this.#explainCancel(err, next),
      log: this.#log,
      closed: () => this.#closed,
      track: (fail) => {
        this.#watches.add(fail);
        return () => this.#watches.delete(fail);
      },
    });
  }

  async currentRevision(): Promise<number> {
    const res = await this.#call('read revision', (o) => this.#client.kv.range({ key: ZERO, count_only: true }, o));
    return Number(res.header.revision);
  }

  /**
   * etcd does not report its compacted revision, so this finds the oldest readable revision by
   * binary search over reads (O(log n) requests), starting from the last one found.
   */
  async compactedRevision(): Promise<number> {
    let lo = Math.max(this.#compactedHint, 1); // readable or 1
    let hi = await this.currentRevision(); // always readable
    if (await this.#readableAt(lo)) return this.#compactedHint;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (await this.#readableAt(mid)) hi = mid;
      else lo = mid;
    }
    this.#compactedHint = Math.max(this.#compactedHint, hi);
    return this.#compactedHint;
  }

  async compact(revision: number): Promise<void> {
    checkRevision('revision', revision);
    try {
      await this.#call('compact', (o) => this.#client.kv.compact({ revision, physical: true }, o));
    } catch (err) {
      if (!hasCode(err, 'ERR_GONE')) throw err; // already compacted: done
    }
    this.#compactedHint = Math.max(this.#compactedHint, revision);
    this.#log.info({ revision }, 'Storage compacted');
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#compactor?.dispose();
    for (const fail of [...this.#watches]) fail(closedError());
    // Let the watch iterators run their `finally` (watcher.cancel) before the client goes away.
    await new Promise((r) => setImmediate(r));
    this.#client.close();
  }

  async #readableAt(revision: number): Promise<boolean> {
    try {
      await this.#call('probe revision', (o) => this.#client.kv.range({ key: ZERO, revision, count_only: true }, o));
      return true;
    } catch (err) {
      if (hasCode(err, 'ERR_GONE')) return false;
      throw err;
    }
  }

  async #explainCancel(err: Error, nextRevision: number): Promise<unknown> {
    if (isCompactedError(err)) return toStorageError(err, 'watch', this.#endpoints);
    try {
      if (!(await this.#readableAt(nextRevision))) {
        return new AgentError('ERR_GONE', `watch: revision ${nextRevision - 1} has been compacted`, { cause: err });
      }
    } catch (probeErr) {
      if (!hasCode(probeErr, 'ERR_INVALID_ARGUMENT')) return probeErr;
    }
    return new AgentError('ERR_UNAVAILABLE', `watch canceled by etcd: ${err.message}`, { cause: err });
  }

  /** mod_revision == expected (and the key exists), or just "exists" without an expectation. */
  #guard(k: Buffer, expected: number | undefined): ICompare[] {
    const exists: ICompare = { key: k, target: CompareTarget.Version, result: CompareResult.Greater, version: 0 };
    if (expected === undefined) return [exists];
    return [exists, { key: k, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: expected }];
  }

  #guardFailed(key: string, expected: number | undefined, current: IKeyValue | undefined): never {
    if (!current) throw new AgentError('ERR_NOT_FOUND', `key "${key}" not found`);
    throw new AgentError('ERR_CONFLICT', `key "${key}" is at revision ${current.mod_revision}, not ${expected}`);
  }

  #full(key: string): Buffer {
    return Buffer.concat([this.#prefix, Buffer.from(key, 'utf8')]);
  }

  #rangeEnd(prefix: string): Buffer {
    const end = prefixRangeEnd(this.#full(prefix));
    return end.length === 0 ? ZERO : Buffer.from(end);
  }

  #toKv(kv: IKeyValue): KeyValue {
    return {
      key: kv.key.subarray(this.#prefix.length).toString('utf8'),
      value: kv.value,
      createRevision: Number(kv.create_revision),
      modRevision: Number(kv.mod_revision),
    };
  }

  /** Runs one request with a deadline and the caller's signal, translating errors once. */
  async #call<T>(what: string, fn: (o: { deadline: Date }) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#closed) throw closedError();
    signal?.throwIfAborted();
    const call = fn({ deadline: new Date(Date.now() + this.#timeoutMs) });
    try {
      if (!signal) return await call;
      // etcd3 cannot cancel a unary call; stop waiting for it instead.
      let onAbort!: () => void;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        return await Promise.race([call, aborted]);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    } catch (err) {
      throw toStorageError(err, what, this.#endpoints);
    }
  }
}
