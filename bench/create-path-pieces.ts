/**
 * CPU per pod create of the pieces of the API server's create path that issue 28 item 1 changed,
 * in one process, this tree beside a baseline tree, interleaved round by round:
 *
 *   managed  the declared object copied, defaulted and its managedFields computed (createAdmitted)
 *   tracing  the pod journey opened and `api.create` recorded (PodJourneys begin + created)
 *   rfc3339  one metav1.Time stamp
 *
 *   node --conditions=source --import tsx bench/create-path-pieces.ts --baseline /tmp/nodelet-base [--n 4000] [--rounds 7]
 *
 * `--baseline` is a tree of the old commit whose node_modules resolve its own @nodelet packages
 * (`git archive <commit> | tar -x -C DIR`, then in DIR/node_modules a link to each entry of this
 * tree's node_modules except @nodelet, and DIR/node_modules/@nodelet/<pkg> → ../../<pkg>). The
 * figure is process CPU time (user + system) per call, the median over the rounds after a
 * warm-up round: work done, not latency, so a loaded machine inflates it much less than a
 * throughput figure (both trees share each round's conditions). Only the JS of these pieces;
 * the whole server's CPU per create is bench/apiserver.ts's "server thread CPU".
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({ options: { baseline: { type: 'string' }, n: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '7' } } });
if (!args.baseline) throw new Error('--baseline DIR is required (see the header)');
const N = Number(args.n);
const ROUNDS = Number(args.rounds);
const PIECES = ['managed', 'tracing', 'rfc3339'] as const;
type Piece = (typeof PIECES)[number];

/** The bench pod (bench/lib/bench-pod.ts), as a fresh object per call. */
const pod = (): Record<string, unknown> & { metadata: Record<string, unknown> } => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p1', namespace: 'default', labels: { app: 'bench', idx: 'p1' } },
  spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'], resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
});

/* eslint-disable @typescript-eslint/no-explicit-any -- two trees' modules, loaded by path */
async function piecesOf(root: string): Promise<Record<Piece, () => unknown>> {
  const load = (path: string): Promise<any> => import(resolve(root, path));
  const mgr = await load('control-plane/src/apiserver/fieldmanager/manager.ts');
  const typed = await load('control-plane/src/apiserver/fieldmanager/typed.ts');
  const object = await load('control-plane/src/apiserver/object.ts');
  const journeysModule = await load('control-plane/src/apiserver/pod-journeys.ts');
  const tracer = await load('api/src/tracing/journey-tracer.ts');
  const time = await load('api/src/time.ts');
  const { podStrategy } = await load('control-plane/src/apiserver/strategies/pods.ts');
  // The old tree copied with structuredClone; this one with cloneJson.
  const clone: (v: unknown) => any = object.cloneJson ?? structuredClone;
  const newJourneys = (): any => new journeysModule.PodJourneys(new tracer.JourneyTracer({ service: 'bench' }));
  let journeys = newJourneys();
  let n = 0;
  return {
    managed: () => {
      const declared = clone(pod());
      podStrategy.defaults(declared);
      return mgr.updateManagedFields({ types: typed.typesOfKind('Pod'), apiVersion: 'v1', subresource: '', statusSubresource: true, now: Date.now() }, undefined, declared, 'bench');
    },
    tracing: () => {
      // A fresh server's journeys every 2,000 pods, as in bench/apiserver.ts (never 10,000 open).
      if (++n % 2000 === 0) journeys = newJourneys();
      const o = pod();
      const j = journeys.begin(o, Date.now());
      o.metadata.uid = `u${n}`;
      j.created(o);
    },
    rfc3339: () => time.rfc3339(Date.now()),
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

const trees = { baseline: await piecesOf(resolve(args.baseline)), current: await piecesOf(process.cwd()) };
const cpuUs = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const samples = new Map<string, number[]>();
for (let round = 0; round <= ROUNDS; round++) {
  for (const piece of PIECES) {
    for (const tree of round % 2 ? (['current', 'baseline'] as const) : (['baseline', 'current'] as const)) {
      const f = trees[tree][piece];
      const c0 = cpuUs();
      for (let i = 0; i < N; i++) f();
      const us = (cpuUs() - c0) / N;
      if (round > 0) samples.set(`${piece}/${tree}`, [...(samples.get(`${piece}/${tree}`) ?? []), us]);
    }
  }
}
const median = (a: readonly number[]): number => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
for (const piece of PIECES) {
  const b = median(samples.get(`${piece}/baseline`)!);
  const c = median(samples.get(`${piece}/current`)!);
  console.log(`${piece.padEnd(8)} baseline ${b.toFixed(2)} µs  current ${c.toFixed(2)} µs per create  (${(100 * (1 - c / b)).toFixed(0)} % less)`);
}
