import { AgentError, delay, hasCode, noopLogger, type Disposable, type Logger } from '@nodelet/base';
import { CompareResult, CompareTarget, Etcd3, isRecoverableError, type ICompare, type IKeyValue, type IOptions, type IRangeRequest, type ITxnRequest, type ITxnResponse } from 'etcd3';
import { startCompactor, type CompactorOptions } from '../compactor.js';
import { checkKey, checkRevision, prefixRangeEnd } from '../keys.js';
import type { KeyValue, ListOptions, ListResult, Store, WatchEvent, WatchOptions } from '../types.js';
import { isCompactedError, toStorageError } from './etcd-errors.js';
import type { EtcdTls } from './etcd-tls.js';
import { closedError, etcdWatch } from './etcd-watch.js';
import { COMPACT_REV_KEY, CompactionClaim } from './etcd-compaction-claim.js';
import { resolveWriteOutcome, type WriteIntent } from './etcd-write-outcome.js';
import { startDefragmenter, type DefragSchedule } from './etcd-defragmenter.js';

export interface EtcdStoreOptions {
  /** Client URLs, e.g. `['http://127.0.0.1:2379']`; `https://` for TLS. */
  endpoints: string[];
  /** Prepended to every key (isolates tests or clusters sharing one etcd). Default none. */
  prefix?: string;
  logger?: Logger;
  /**
   * TLS for `https://` endpoints (see etcd-tls.ts): the CA that signed etcd's serving
   * certificate (default: the system roots) and an optional client certificate and key (etcd's
   * --client-cert-auth). Refused with `http://` endpoints, which it would silently upgrade.
   */
  tls?: EtcdTls;
  /** Per-request deadline. Default 10 s. */
  requestTimeoutMs?: number;
  compactor?: CompactorOptions;
  /** Defragment every member, one at a time, this often (etcd-defragmenter.ts). Default off. */
  defrag?: DefragSchedule;
}

/**
 * A store on etcd v3 with kube-apiserver's transaction shapes: create `If(mod==0) Put`, update
 * `If(mod==rev) Put Else Range`, delete guarded the same way. Revisions are etcd's.
 *
 * Retries: the etcd3 client's own retry policy is turned off (it re-sends any call after a
 * connection error, writes included). Reads are retried here ({@link READ_ATTEMPTS}); a write
 * is sent once, and when its reply is lost the key's history decides whether it applied
 * (etcd-write-outcome.ts), so a write that committed is never reported as a conflict.
 */
/** The largest etcd reply the store reads (etcd clientv3's default MaxCallRecvMsgSize, math.MaxInt32). */
export const MAX_REPLY_BYTES = 2 ** 31 - 1;

export function createEtcdStore(opts: EtcdStoreOptions): Store {
  return new EtcdStore(opts);
}

const ZERO = Buffer.from([0]);
/** Attempts per read on a transient error (etcd3's default was 3, for every call). */
const READ_ATTEMPTS = 3;
/** Sends of one write: the first, plus re-sends after etcd showed it had not applied. */
const WRITE_ATTEMPTS = 3;
const RETRY_DELAY_MS = 100;

/**
 * The signal handed to a policy call nobody can cancel: one for all of them (an AbortController per
 * etcd call was 0.4 % of the server thread under creates). etcd3's connection pool does not read it.
 */
const NEVER_ABORTED = new AbortController().signal;

/**
 * The etcd3 client's "global" fault policy wraps every unary call; by default it retries three
 * times on any recoverable error. This one runs the call once. (The per-host circuit breaker
 * stays: it fails calls fast while a member is down.)
 */
const RUN_ONCE = {
  execute: <T>(fn: (ctx: { signal: AbortSignal }) => PromiseLike<T> | T, signal?: AbortSignal): Promise<T> =>
    Promise.resolve().then(() => fn({ signal: signal ?? NEVER_ABORTED })),
} as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/** Result of {@link EtcdStore.#write}: the txn reply, or a success proven by reading the key. */
type WriteResult = { ok: true; revision: number; res?: ITxnResponse } | { ok: false; current: IKeyValue | undefined };

class EtcdStore implements Store {
  readonly #client: Etcd3;
  readonly #prefix: Buffer;
  readonly #endpoints: readonly string[];
  readonly #timeoutMs: number;
  readonly #log: Logger;
  readonly #watches = new Set<(err: unknown) => void>();
  readonly #compactor: Disposable | undefined;
  readonly #claim: CompactionClaim;
  readonly #defragmenter: Disposable | undefined;
  /** Highest revision known to be compacted; compaction only moves forward. */
  #compactedHint = 0;
  /** Highest revision seen in any reply: a write sent now applies after it. */
  #seenRevision = 0;
  #closed = false;

  constructor(opts: EtcdStoreOptions) {
    if (opts.endpoints.length === 0) throw new AgentError('ERR_INVALID_ARGUMENT', 'etcd store needs at least one endpoint');
    const secure = opts.endpoints.filter((e) => e.startsWith('https://')).length;
    if (secure !== 0 && secure !== opts.endpoints.length) throw new AgentError('ERR_INVALID_ARGUMENT', 'etcd endpoints must be all https:// or all plaintext');
    // etcd3 would use TLS with credentials whatever the scheme says; make the URL the truth.
    if (opts.tls && secure === 0) throw new AgentError('ERR_INVALID_ARGUMENT', 'etcd TLS material given for plaintext endpoints; use https:// URLs');
    this.#endpoints = opts.endpoints;
    const credentials = opts.tls && {
      // null roots = gRPC's default (system) roots.
      rootCertificate: (opts.tls.ca ?? null) as Buffer,
      ...(opts.tls.cert && opts.tls.key ? { certChain: opts.tls.cert, privateKey: opts.tls.key } : {}),
    };
    this.#client = new Etcd3({
      hosts: [...opts.endpoints],
      dialTimeout: 5000,
      faultHandling: { global: RUN_ONCE },
      // A reply as large as etcd sends it: etcd's own Go client (what kube-apiserver uses) takes
      // replies up to math.MaxInt32, while gRPC's default of 4 MiB failed every list past it
      // (3,000 pods) with RESOURCE_EXHAUSTED, which etcd3 counts as a host failure: three in a row
      // broke the host's circuit and made etcd "unreachable" for every request for 5 s.
      grpcOptions: { 'grpc.max_receive_message_length': MAX_REPLY_BYTES },
      ...(credentials ? { credentials } : {}),
    });
    this.#prefix = Buffer.from(opts.prefix ?? '', 'utf8');
    this.#timeoutMs = opts.requestTimeoutMs ?? 10_000;
    this.#log = (opts.logger ?? noopLogger).child({ component: 'storage-etcd' });
    this.#claim = new CompactionClaim(this.#full(COMPACT_REV_KEY));
    this.#compactor = opts.compactor ? startCompactor(this, { ...opts.compactor, logger: this.#log }) : undefined;
    this.#defragmenter = opts.defrag ? startDefragmenter({ endpoints: opts.endpoints, ...(opts.tls ? { tls: opts.tls } : {}) }, { ...opts.defrag, logger: this.#log }) : undefined;
  }

  async get(key: string, opts?: { signal?: AbortSignal }): Promise<KeyValue | undefined> {
    checkKey(key);
    const res = await this.#read(`get "${key}"`, (o) => this.#client.kv.range({ key: this.#full(key) }, o), opts?.signal);
    return res.kvs[0] && this.#toKv(res.kvs[0]);
  }

  async list(prefix: string, opts: ListOptions & { signal?: AbortSignal } = {}): Promise<ListResult> {
    if (opts.revision !== undefined) checkRevision('revision', opts.revision);
    const limit = opts.limit ?? 0;
    checkRevision('limit', limit);
    const start = opts.startAfter !== undefined ? Buffer.concat([this.#full(opts.startAfter), ZERO]) : this.#full(prefix);
    const req: IRangeRequest = { key: start, range_end: this.#rangeEnd(prefix), revision: opts.revision ?? 0, limit };
    const res = await this.#read(`list "${prefix}"`, (o) => this.#client.kv.range(req, o), opts.signal);
    const items = res.kvs.map((kv) => this.#toKv(kv));
    const result: ListResult = { items, revision: opts.revision || Number(res.header.revision), more: res.more };
    if (res.more) result.remaining = Number(res.count) - items.length;
    return result;
  }

  async count(prefix: string): Promise<number> {
    const req: IRangeRequest = { key: this.#full(prefix), range_end: this.#rangeEnd(prefix), count_only: true };
    const res = await this.#read(`count "${prefix}"`, (o) => this.#client.kv.range(req, o));
    return Number(res.count);
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    checkKey(key);
    const k = this.#full(key);
    const res = await this.#write(`create "${key}"`, k, { op: 'create', value }, {
      compare: [{ key: k, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: 0 }],
      success: [{ request_put: { key: k, value: Buffer.from(value) } }],
    });
    if (!res.ok) throw new AgentError('ERR_ALREADY_EXISTS', `key "${key}" already exists`);
    return res.revision;
  }

  async update(key: string, value: Uint8Array, expectedRevision: number): Promise<number> {
    checkKey(key);
    checkRevision('expectedRevision', expectedRevision);
    const k = this.#full(key);
    const res = await this.#write(`update "${key}"`, k, { op: 'update', value, expected: expectedRevision }, {
      compare: this.#guard(k, expectedRevision),
      success: [{ request_put: { key: k, value: Buffer.from(value) } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.ok) this.#guardFailed(key, expectedRevision, res.current);
    return res.revision;
  }

  async delete(key: string, expectedRevision?: number): Promise<{ revision: number; kv: KeyValue }> {
    checkKey(key);
    if (expectedRevision !== undefined) checkRevision('expectedRevision', expectedRevision);
    const k = this.#full(key);
    const res = await this.#write(`delete "${key}"`, k, expectedRevision === undefined ? { op: 'delete' } : { op: 'delete', expected: expectedRevision }, {
      compare: this.#guard(k, expectedRevision),
      success: [{ request_delete_range: { key: k, prev_kv: true } }],
      failure: [{ request_range: { key: k } }],
    });
    if (!res.ok) this.#guardFailed(key, expectedRevision, res.current);
    // A delete is only ever resolved from its own reply (etcd-write-outcome.ts), so prev_kv is there.
    const prev = res.res?.responses[0]?.response_delete_range.prev_kvs[0];
    if (!prev) throw new AgentError('ERR_NOT_FOUND', `key "${key}" not found`);
    return { revision: res.revision, kv: this.#toKv(prev) };
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
    const res = await this.#read('read revision', (o) => this.#client.kv.range({ key: ZERO, count_only: true }, o));
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
      await this.#read('compact', (o) => this.#client.kv.compact({ revision, physical: true }, o));
    } catch (err) {
      if (!hasCode(err, 'ERR_GONE')) throw err; // already compacted: done
    }
    this.#compactedHint = Math.max(this.#compactedHint, revision);
    this.#log.info({ revision }, 'Storage compacted');
  }

  /**
   * Whether this server compacts in this interval (etcd-compaction-claim.ts): with several
   * servers on one etcd, one of them does. Called by the background compactor.
   */
  async claimCompaction(): Promise<boolean> {
    const revision = await this.currentRevision();
    const won = await this.#claim.claim((txn) => this.#read('claim compaction', (o) => txn(this.#client.kv, o)), revision);
    if (!won) this.#log.debug({ compactTime: this.#claim.time }, 'Another server compacts this interval');
    return won;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#compactor?.dispose();
    this.#defragmenter?.dispose();
    for (const fail of [...this.#watches]) fail(closedError());
    // Let the watch iterators run their `finally` (watcher.cancel) before the client goes away.
    await new Promise((r) => setImmediate(r));
    this.#client.close();
  }

  async #readableAt(revision: number): Promise<boolean> {
    try {
      await this.#read('probe revision', (o) => this.#client.kv.range({ key: ZERO, revision, count_only: true }, o));
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

  /** A read: retried on transient errors (it changes nothing), translated once. */
  async #read<T>(what: string, fn: (o: { deadline: Date }) => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#send(fn, signal);
      } catch (err) {
        if (attempt >= READ_ATTEMPTS || !isTransient(err) || this.#closed) throw toStorageError(err, what, this.#endpoints);
        this.#log.debug({ err, what, attempt }, 'Etcd read failed; retrying');
        await delay(RETRY_DELAY_MS * attempt, signal);
      }
    }
  }

  /**
   * A write transaction. Sent once; a guard failure in its reply is the answer. When the reply
   * is lost (connection error, deadline), the key's history decides (etcd-write-outcome.ts):
   * applied → success with the revision it got; provably not applied → sent again; undecidable
   * → ERR_UNAVAILABLE. A guard failure after a lost reply is resolved the same way, since the
   * lost attempt may be what falsified the guard.
   */
  async #write(what: string, key: Buffer, intent: WriteIntent, txn: ITxnRequest): Promise<WriteResult> {
    const floor = this.#seenRevision;
    let lost: unknown;
    for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
      let res: ITxnResponse | undefined;
      try {
        res = await this.#send((o) => this.#client.kv.txn(txn, o));
      } catch (err) {
        if (!isTransient(err) || this.#closed) throw toStorageError(err, what, this.#endpoints);
        lost = err;
      }
      if (res?.succeeded) return { ok: true, revision: Number(res.header.revision), res };
      if (res && lost === undefined) return { ok: false, current: res.responses[0]?.response_range?.kvs[0] };
      const outcome = await resolveWriteOutcome(intent, { at: (revision) => this.#keyAt(key, revision) }, floor);
      switch (outcome.kind) {
        case 'applied':
          this.#log.info({ what, revision: outcome.revision, err: lost }, 'Etcd write reply lost; the write had applied');
          return { ok: true, revision: outcome.revision };
        case 'rejected':
          return { ok: false, current: outcome.current };
        case 'unknown':
          throw new AgentError('ERR_UNAVAILABLE', `${what}: outcome unknown after the reply from etcd at ${this.#endpoints.join(',')} was lost (${outcome.why}); read the key again`, { cause: lost });
        case 'not-applied':
          this.#log.warn({ what, attempt, err: lost }, 'Etcd write reply lost; the write had not applied, sending it again');
          await delay(RETRY_DELAY_MS * attempt);
      }
    }
    throw new AgentError('ERR_UNAVAILABLE', `${what}: etcd at ${this.#endpoints.join(',')} did not apply the write in ${WRITE_ATTEMPTS} attempts`, { cause: lost });
  }

  /** The key (full etcd key) at `revision` (default: now), for write resolution. */
  async #keyAt(key: Buffer, revision?: number): Promise<IKeyValue | undefined> {
    const res = await this.#read('read key history', (o) => this.#client.kv.range({ key, revision: revision ?? 0 }, o));
    return res.kvs[0];
  }

  /** One request with a deadline and the caller's signal; errors are the client's, untranslated. */
  async #send<T>(fn: (o: { deadline: Date }) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.#closed) throw closedError();
    signal?.throwIfAborted();
    const call = fn({ deadline: new Date(Date.now() + this.#timeoutMs) });
    let res: T;
    if (!signal) {
      res = await call;
    } else {
      // etcd3 cannot cancel a unary call; stop waiting for it instead.
      let onAbort!: () => void;
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(signal.reason);
        signal.addEventListener('abort', onAbort, { once: true });
      });
      try {
        res = await Promise.race([call, aborted]);
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
    }
    const revision = Number((res as { header?: { revision?: string } }).header?.revision ?? 0);
    if (revision > this.#seenRevision) this.#seenRevision = revision;
    return res;
  }
}

/** A connection-level failure (etcd3's "recoverable": unavailable, deadline, reset, …). */
function isTransient(err: unknown): boolean {
  return err instanceof Error && isRecoverableError(err);
}
