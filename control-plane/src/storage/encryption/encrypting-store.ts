/**
 * Encryption at rest as a {@link Store} decorator: values under the configured key prefixes are
 * transformed on their way into the store (create, update) and back on every way out (get, list,
 * watch events and their previous values, delete's last value). Everything above — registries,
 * the watch cache, handlers — sees plaintext; everything below — the SQLite file, etcd — only the
 * stored form. Keys, revisions and counts are untouched, so both backends and the compactor behave
 * as without it.
 */
import { AgentError } from '@nodelet/base';
import type { KeyValue, Store, WatchEvent } from '../types.js';
import type { ValueTransformer } from './providers.js';

/**
 * A stored value that no configured provider can read. kube-apiserver answers such a read with
 * 500 InternalError "Internal error occurred: unable to transform key …"; status.ts shows this
 * message (other internal errors stay in the server log).
 */
export class TransformError extends AgentError {
  constructor(key: string, reason: string) {
    super('ERR_INTERNAL', `unable to transform key "${key}": ${reason}`);
    this.name = 'TransformError';
  }
}

/**
 * A custom resource's key: `/registry/<group>/<plural>/…`, its group with a dot (a CRD's group
 * always has one; built-in resources are stored under their plural alone).
 */
const CUSTOM_KEY = /^(\/registry\/([^/]*\.[^/]*)\/([^/]+)\/)/;

/**
 * Wraps `store`; `byPrefix` maps a built-in resource's key prefix (`/registry/secrets/`) to its
 * transformer, `custom` gives a custom resource's by its group and plural (asked once per prefix:
 * custom resources are known only at run time).
 */
export function createEncryptingStore(store: Store, byPrefix: ReadonlyMap<string, ValueTransformer>, custom?: (group: string, plural: string) => ValueTransformer | undefined): Store {
  const prefixes = [...byPrefix.keys()];
  const customByPrefix = new Map<string, ValueTransformer | undefined>();
  const transformerOf = (key: string): ValueTransformer | undefined => {
    const p = prefixes.find((x) => key.startsWith(x));
    if (p !== undefined) return byPrefix.get(p);
    const m = custom && CUSTOM_KEY.exec(key);
    if (!m) return undefined;
    if (!customByPrefix.has(m[1]!)) customByPrefix.set(m[1]!, custom!(m[2]!, m[3]!));
    return customByPrefix.get(m[1]!);
  };
  const out = (kv: KeyValue): KeyValue => {
    const t = transformerOf(kv.key);
    if (!t) return kv;
    try {
      const read = t.fromStorage(kv.value, kv.key);
      return { ...kv, value: read.value, ...(read.stale ? { stale: true } : {}) };
    } catch (err) {
      throw new TransformError(kv.key, (err as Error).message);
    }
  };
  const into = (key: string, value: Uint8Array): Uint8Array => transformerOf(key)?.toStorage(value, key) ?? value;
  const event = (e: WatchEvent): WatchEvent => {
    const kv = out(e.kv);
    // A DELETE carries one value as both kv and prevKv: read it once.
    const prevKv = e.prevKv === undefined ? undefined : e.prevKv === e.kv ? kv : out(e.prevKv);
    return { ...e, kv, ...(prevKv ? { prevKv } : {}) };
  };
  return {
    get: async (key, opts) => {
      const kv = await store.get(key, opts);
      return kv && out(kv);
    },
    list: async (prefix, opts) => {
      const r = await store.list(prefix, opts);
      return { ...r, items: r.items.map(out) };
    },
    count: (prefix) => store.count(prefix),
    create: (key, value) => store.create(key, into(key, value)),
    update: (key, value, expectedRevision) => store.update(key, into(key, value), expectedRevision),
    delete: async (key, expectedRevision) => {
      const r = await store.delete(key, expectedRevision);
      return { ...r, kv: out(r.kv) };
    },
    watch: (prefix, opts) => ({
      async *[Symbol.asyncIterator]() {
        for await (const e of store.watch(prefix, opts)) yield event(e);
      },
    }),
    currentRevision: () => store.currentRevision(),
    compactedRevision: () => store.compactedRevision(),
    compact: (revision) => store.compact(revision),
    close: () => store.close(),
  };
}
