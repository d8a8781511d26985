// Measures the client side against InMemoryApiServer (loopback HTTP, same process): request
// latency of creates at 16 in flight, a paged list, informer sync, and create→informer-event
// latency. Run: node --conditions=source --import tsx api/test/bench/client-bench.ts [count]
import { Informer, PODS, type Pod } from '@nodelet/api';
import { InMemoryApiServer } from '@nodelet/api/testing';

const count = Number(process.argv[2] ?? 1000);
const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((xs.length * p) / 100))] ?? NaN;
const pod = (name: string): Pod => ({ metadata: { name, namespace: 'bench' }, spec: { containers: [{ name: 'main', image: 'busybox' }] } });

const server = await InMemoryApiServer.start();
const client = server.client({ timeoutMs: 30_000 });
const pods = client.resource(PODS, 'bench');

const lat: number[] = [];
let next = 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < count) {
      const i = next++;
      const s = performance.now();
      await pods.create(pod(`p-${i}`));
      lat.push(performance.now() - s);
    }
  }),
);
const createS = (performance.now() - t0) / 1000;
console.log(`create x${count} (16 in flight): p50 ${pct(lat, 50).toFixed(2)} ms, p99 ${pct(lat, 99).toFixed(2)} ms, ${(count / createS).toFixed(0)}/s`);

let s = performance.now();
const all = await pods.listAll({ limit: 500 });
console.log(`listAll ${all.items.length} pods (pages of 500): ${(performance.now() - s).toFixed(1)} ms`);

const informer = new Informer<Pod>({ client, resource: PODS, namespace: 'bench' });
s = performance.now();
informer.start();
await informer.waitForSync();
console.log(`informer sync of ${informer.list().length} pods: ${(performance.now() - s).toFixed(1)} ms`);

const eventLat: number[] = [];
const pending = new Map<string, number>();
informer.on({ onAdd: (p) => {
  const started = pending.get(p.metadata.name ?? '');
  if (started !== undefined) eventLat.push(performance.now() - started);
} });
while (server.watchCount === 0) await new Promise((r) => setTimeout(r, 5));
for (let i = 0; i < 200; i++) {
  const name = `w-${i}`;
  pending.set(name, performance.now());
  await pods.create(pod(name));
}
while (eventLat.length < 200) await new Promise((r) => setTimeout(r, 5));
console.log(`create → informer onAdd (200 sequential): p50 ${pct(eventLat, 50).toFixed(2)} ms, p99 ${pct(eventLat, 99).toFixed(2)} ms`);

await informer.close();
await server.close();
