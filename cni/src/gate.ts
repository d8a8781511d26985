/**
 * A per-key shared/exclusive gate (a FIFO read-write lock). ADD, DEL and CHECK of one network
 * take it shared; GC takes it exclusive, because the spec makes GC exclusive with ADD and DEL on
 * the network (SPEC.md "Lifecycle & Ordering").
 */
export class SharedExclusiveGate {
  readonly #keys = new Map<string, { readers: number; writer: boolean; queue: Array<{ exclusive: boolean; grant: () => void }> }>();

  shared<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.#with(key, false, task);
  }

  exclusive<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.#with(key, true, task);
  }

  /** Keys with holders or waiters (for leak checks in tests). */
  get size(): number {
    return this.#keys.size;
  }

  async #with<T>(key: string, exclusive: boolean, task: () => Promise<T>): Promise<T> {
    let s = this.#keys.get(key);
    if (!s) {
      s = { readers: 0, writer: false, queue: [] };
      this.#keys.set(key, s);
    }
    const st = s;
    const free = exclusive ? !st.writer && st.readers === 0 : !st.writer;
    if (free && st.queue.length === 0) this.#take(st, exclusive);
    else await new Promise<void>((grant) => st.queue.push({ exclusive, grant }));
    try {
      return await task();
    } finally {
      if (exclusive) st.writer = false;
      else st.readers--;
      this.#drain(key, st);
    }
  }

  #take(st: { readers: number; writer: boolean }, exclusive: boolean): void {
    if (exclusive) st.writer = true;
    else st.readers++;
  }

  #drain(key: string, st: { readers: number; writer: boolean; queue: Array<{ exclusive: boolean; grant: () => void }> }): void {
    while (st.queue.length > 0) {
      const head = st.queue[0]!;
      const ok = head.exclusive ? !st.writer && st.readers === 0 : !st.writer;
      if (!ok) break;
      st.queue.shift();
      this.#take(st, head.exclusive);
      head.grant();
      if (head.exclusive) break;
    }
    if (!st.writer && st.readers === 0 && st.queue.length === 0) this.#keys.delete(key);
  }
}
