/**
 * `GET /debug/nodelet/heap[?gc=1]`: this process's memory as V8 and the kernel see it, the answer
 * to "is it leaking?" that RSS alone cannot give. RSS rises and falls with when the collector last
 * ran and how far V8 grew its young generation in the last burst; the heap still in use right after
 * a full collection does not. `gc` is read as Go's `net/http/pprof` reads it on kubelet's
 * `/debug/pprof/heap`: an integer, and a positive one runs a full collection first.
 *
 * The collection goes through an in-process inspector session (`HeapProfiler.collectGarbage`), which
 * needs no `--expose-gc` and opens no port. It stops the process for a full mark-compact (tens of
 * milliseconds with a 40 MiB heap), which is why it is only done when asked for; the inspector
 * module is loaded then too, not by every process that serves this path.
 */

/** The JSON body of `/debug/nodelet/heap` (bytes). */
export interface HeapReport {
  /** Whether a full collection ran just before these were read (`?gc=1`). */
  collected: boolean;
  /** V8 heap in use: live objects, plus garbage not collected yet unless `collected`. */
  heapUsedBytes: number;
  /** V8 heap reserved (used or not). */
  heapTotalBytes: number;
  /** Memory outside the V8 heap held by JavaScript objects (Buffers, ArrayBuffers). */
  externalBytes: number;
  /** Resident set of the whole process (`VmRSS`). */
  rssBytes: number;
}

export async function heapReport(collect: boolean): Promise<HeapReport> {
  if (collect) {
    const { Session } = await import('node:inspector/promises');
    const session = new Session();
    session.connect();
    try {
      await session.post('HeapProfiler.collectGarbage');
    } finally {
      session.disconnect();
    }
  }
  const m = process.memoryUsage();
  return { collected: collect, heapUsedBytes: m.heapUsed, heapTotalBytes: m.heapTotal, externalBytes: m.external, rssBytes: m.rss };
}

/** A body read back as a {@link HeapReport}, or undefined when it is not one. */
export function asHeapReport(body: unknown): HeapReport | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const nums = ['heapUsedBytes', 'heapTotalBytes', 'externalBytes', 'rssBytes'] as const;
  if (typeof b.collected !== 'boolean' || !nums.every((k) => typeof b[k] === 'number')) return undefined;
  return b as unknown as HeapReport;
}
