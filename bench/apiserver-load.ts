// Worker thread of bench/apiserver.ts: the HTTPS load generator. It runs off the API server's
// event loop, as a real client (kubectl, a controller) runs in its own process, so the
// server's latencies are not its client's TLS and JSON work.
//
//   workerData { url, ca, token, warmup, names, concurrency, namespace }
//   ─▶ creates `warmup` (opens the keep-alive connections, warms the JIT) ─▶ posts 'warm'
//   ◀─ 'go' ─▶ creates `names`, timed ─▶ posts { latencies, seconds }
import { once } from 'node:events';
import https from 'node:https';
import { parentPort, workerData } from 'node:worker_threads';
import { benchPodBody } from './lib/bench-pod.js';

interface LoadJob {
  url: string;
  ca: string;
  token: string;
  warmup: string[];
  names: string[];
  concurrency: number;
  namespace: string;
}

export interface LoadResult {
  /** Per-request milliseconds, from sending the POST to reading the whole 201 reply. */
  latencies: number[];
  seconds: number;
}

const job = workerData as LoadJob;
const agent = new https.Agent({ keepAlive: true, maxSockets: job.concurrency, ca: job.ca });

function post(path: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = { Authorization: `Bearer ${job.token}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) };
    const req = https.request(new URL(path, job.url), { method: 'POST', agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Creates every pod of `names`, `concurrency` at a time; returns each request's latency. */
async function createAll(names: readonly string[]): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: job.concurrency }, async () => {
      while (next < names.length) {
        const name = names[next++]!;
        const t0 = performance.now();
        const r = await post(`/api/v1/namespaces/${job.namespace}/pods`, benchPodBody(name));
        if (r.status !== 201) throw new Error(`create ${name}: ${r.status} ${r.body}`);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return latencies;
}

await createAll(job.warmup);
const go = once(parentPort!, 'message');
parentPort!.postMessage('warm');
await go;
const started = performance.now();
const latencies = await createAll(job.names);
const result: LoadResult = { latencies, seconds: (performance.now() - started) / 1000 };
agent.destroy();
parentPort!.postMessage(result);
