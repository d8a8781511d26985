/**
 * CPU per request of the pieces of the API server's write path that issue 28 item 1's fourth
 * pass changed, in one process, this tree beside a baseline tree, interleaved round by round:
 *
 *   status     a node's pod status patch without the store: the current pod copied as
 *              guaranteedUpdate hands it to the handler, the strategic merge patch, admitUpdate
 *              (validation included), the managed fields and the no-change check (handlePatch)
 *   peer-user  the user of a client certificate, once per request on one TLS connection
 *              (the authentication filter; this tree remembers it per connection)
 *
 *   node --conditions=source --import tsx bench/apiserver-status-pieces.ts --baseline /tmp/nodelet-base [--n 4000] [--rounds 7]
 *
 * `--baseline` is a tree of the old commit laid out as bench/create-path-pieces.ts's header says.
 * The figure is process CPU time (user + system) per call, the median over the rounds after a
 * warm-up round. Only the JS of these pieces; the whole server's CPU per pod is
 * bench/density.ts's "API server CPU burst".
 */
import { resolve } from 'node:path';
import tls from 'node:tls';
import { parseArgs } from 'node:util';
import { createCa, issueCertificate, loadCa } from '../control-plane/src/pki/certs.js';

const { values: args } = parseArgs({ options: { baseline: { type: 'string' }, n: { type: 'string', default: '4000' }, rounds: { type: 'string', default: '7' } } });
if (!args.baseline) throw new Error('--baseline DIR is required (see the header)');
const N = Number(args.n);
const ROUNDS = Number(args.rounds);
const PIECES = ['status', 'peer-user'] as const;
type Piece = (typeof PIECES)[number];

/** A running pod as a node's agent leaves it (bound, two managers, four conditions), 3.5 KB. */
const RUNNING_POD = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'd0-abcde-xyz12', generateName: 'd0-abcde-', namespace: 'density', uid: '2f0a9c3e-1b2c-4d5e-8f90-123456789abc', resourceVersion: '12345', creationTimestamp: '2026-12-05T15:00:00Z',
    labels: { app: 'd0', 'pod-template-hash': 'abcde' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'd0-abcde', uid: 'aaaa-bbbb', controller: true, blockOwnerDeletion: true }],
    managedFields: [
      { manager: 'replicaset-controller', operation: 'Update', apiVersion: 'v1', time: '2026-12-05T15:00:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:generateName': {}, 'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} }, 'f:ownerReferences': { '.': {}, 'k:{"uid":"aaaa-bbbb"}': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:imagePullPolicy': {}, 'f:name': {}, 'f:resources': {}, 'f:terminationMessagePath': {}, 'f:terminationMessagePolicy': {} } }, 'f:dnsPolicy': {}, 'f:enableServiceLinks': {}, 'f:restartPolicy': {}, 'f:schedulerName': {}, 'f:securityContext': {}, 'f:terminationGracePeriodSeconds': {} } } },
      { manager: 'nodelet', operation: 'Update', apiVersion: 'v1', time: '2026-12-05T15:00:01Z', fieldsType: 'FieldsV1', subresource: 'status', fieldsV1: { 'f:status': { 'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:lastProbeTime': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} } }, 'f:containerStatuses': {}, 'f:hostIP': {}, 'f:phase': {}, 'f:podIP': {}, 'f:startTime': {} } } },
    ],
  },
  spec: {
    containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9', imagePullPolicy: 'IfNotPresent', resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', volumeMounts: [{ name: 'kube-api-access-x', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }] }],
    dnsPolicy: 'ClusterFirst', enableServiceLinks: true, nodeName: 'hollow-3', preemptionPolicy: 'PreemptLowerPriority', priority: 0, restartPolicy: 'Always', schedulerName: 'default-scheduler', securityContext: {}, serviceAccountName: 'default', terminationGracePeriodSeconds: 30,
    tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }, { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    volumes: [{ name: 'kube-api-access-x', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } }],
  },
  status: {
    phase: 'Running', hostIP: '10.0.0.3', podIP: '10.244.3.7', podIPs: [{ ip: '10.244.3.7' }], startTime: '2026-12-05T15:00:01Z', qosClass: 'BestEffort',
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: '2026-12-05T15:00:01Z' })),
    containerStatuses: [{ name: 'c', ready: true, restartCount: 0, started: true, image: 'registry.k8s.io/pause:3.9', imageID: 'sha256:abc', containerID: 'containerd://abc', state: { running: { startedAt: '2026-12-05T15:00:01Z' } }, lastState: {} }],
  },
};
const STATUS_PATCH = { status: { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: '2026-12-05T15:00:09Z' }] } };

/** One server-side TLS connection that presented a client certificate, and its client. */
async function certificateConnection(): Promise<{ socket: tls.TLSSocket; close(): void }> {
  const ca = await loadCa(await createCa('bench-ca'));
  const serving = await issueCertificate(ca, { commonName: 'apiserver', usage: 'server', ips: ['127.0.0.1'] });
  const client = await issueCertificate(ca, { commonName: 'system:node:hollow-3', organization: 'system:nodes', usage: 'client' });
  const server = tls.createServer({ key: serving.keyPem, cert: serving.certPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: false });
  const accepted = new Promise<tls.TLSSocket>((r) => server.once('secureConnection', r));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const c = tls.connect({ port: (server.address() as { port: number }).port, host: '127.0.0.1', ca: ca.certPem, cert: client.certPem, key: client.keyPem });
  const socket = await accepted;
  return { socket, close: () => (c.destroy(), server.close()) };
}

/* eslint-disable @typescript-eslint/no-explicit-any -- two trees' modules, loaded by path */
async function piecesOf(root: string, socket: tls.TLSSocket): Promise<Record<Piece, () => unknown>> {
  const load = (path: string): Promise<any> => import(resolve(root, 'control-plane/src/apiserver', path));
  const { findResource } = await load('resources.ts');
  const { applyPatch } = await load('patch/apply.ts');
  const { admitUpdate, unchanged } = await load('handlers/admit.ts');
  const { updateManagedFields } = await load('fieldmanager/manager.ts');
  const { typesOfDef } = await load('fieldmanager/typed.ts');
  const { apiVersionOf } = await load('resource.ts');
  const object = await load('object.ts');
  const x509 = await load('auth/x509-authenticator.ts');
  const def = findResource('', 'v1', 'pods');
  // The old tree's guaranteedUpdate copied with structuredClone; this one with cloneJson.
  const clone: (v: unknown) => any = object.deepClone ? structuredClone : object.cloneJson;
  // This tree's server pins every connection (server.ts); the old tree's module has no pin and
  // reads the certificate on every call (each tree's module keeps its own per-connection memory).
  x509.pinClientCertificate?.(socket);
  return {
    status: () => {
      const current = clone(RUNNING_POD);
      const next = applyPatch('strategic', current, STATUS_PATCH, 'Pod');
      next.metadata.resourceVersion = current.metadata.resourceVersion;
      const admitted = admitUpdate(def, next, current, 'status');
      admitted.metadata.managedFields = updateManagedFields({ types: typesOfDef(def), apiVersion: apiVersionOf(def), subresource: 'status', statusSubresource: true, now: Date.now() }, current, admitted, 'nodelet');
      if (unchanged(admitted, current)) throw new Error('the status patch changed nothing');
      return admitted;
    },
    'peer-user': () => {
      const user = x509.userFromClientCertificate(socket);
      if (user?.name !== 'system:node:hollow-3') throw new Error('no user from the certificate');
      return user;
    },
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */

const conn = await certificateConnection();
const trees = { baseline: await piecesOf(args.baseline, conn.socket), 'this tree': await piecesOf(process.cwd(), conn.socket) };
const samples = new Map<string, number[]>();
for (let round = 0; round <= ROUNDS; round++) {
  const order = round % 2 === 0 ? (['baseline', 'this tree'] as const) : (['this tree', 'baseline'] as const);
  for (const piece of PIECES) {
    for (const tree of order) {
      const f = trees[tree][piece];
      const t = process.cpuUsage();
      for (let i = 0; i < N; i++) f();
      const u = process.cpuUsage(t);
      if (round > 0) samples.set(`${piece} ${tree}`, [...(samples.get(`${piece} ${tree}`) ?? []), (u.user + u.system) / N]);
    }
  }
}
conn.close();
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`CPU µs per call, median of ${ROUNDS} rounds of ${N} (process CPU; both trees in each round)`);
for (const piece of PIECES) {
  const [b, t] = [median(samples.get(`${piece} baseline`)!), median(samples.get(`${piece} this tree`)!)];
  console.log(`${piece.padEnd(10)} baseline ${b.toFixed(2).padStart(8)}   this tree ${t.toFixed(2).padStart(8)}   (${((1 - t / b) * 100).toFixed(0)} % less)`);
}
