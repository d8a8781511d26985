/**
 * Which of several API servers on one etcd compacts in an interval: kube-apiserver's protocol on
 * the key `compact_rev_key` (under the store's prefix), whose *version* is a logical clock.
 *
 *   every interval:  Txn If(version(compact_rev_key) == T) Then Put(compact_rev_key, rev) Else Get
 *                    succeeded → T + 1, this server compacts now
 *                    failed    → T = the version read; another server compacted this interval
 *
 * A server that just started knows T = 0, so it loses its first round to a running compactor
 * and learns T; when the compacting server dies, the next server's CAS succeeds one interval
 * later. So the store is compacted once per interval (up to two during a fail-over), never by
 * every server at once. Using kube-apiserver's key means a kube-apiserver sharing the etcd joins
 * the same rotation.
 */
import { CompareResult, CompareTarget, type Etcd3, type ITxnResponse } from 'etcd3';

export const COMPACT_REV_KEY = 'compact_rev_key';

export class CompactionClaim {
  readonly #key: Buffer;
  /** The key's version as this server last knew it. */
  #time = 0;

  /** `key`: the full etcd key (store prefix + {@link COMPACT_REV_KEY}). */
  constructor(key: Buffer) {
    this.#key = key;
  }

  /** The logical time last seen (tests). */
  get time(): number {
    return this.#time;
  }

  /**
   * One round: true when this server won the interval and should compact. `send` runs the txn
   * (with the store's deadline and error translation); `revision` is recorded as the key's value.
   */
  async claim(send: (txn: (client: Etcd3['kv'], o: { deadline: Date }) => Promise<ITxnResponse>) => Promise<ITxnResponse>, revision: number): Promise<boolean> {
    const key = this.#key;
    const t = this.#time;
    const res = await send((kv, o) => kv.txn({
      compare: [{ key, target: CompareTarget.Version, result: CompareResult.Equal, version: t }],
      success: [{ request_put: { key, value: Buffer.from(String(revision)) } }],
      failure: [{ request_range: { key } }],
    }, o));
    if (res.succeeded) {
      this.#time = t + 1;
      return true;
    }
    this.#time = Number(res.responses[0]?.response_range?.kvs[0]?.version ?? 0);
    return false;
  }
}
