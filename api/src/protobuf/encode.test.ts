import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import protobuf from 'protobufjs';
import { decodeProtobufMessage, decodeProtobufObject, protobufRoot } from './decode.js';
import { writeMessage } from './write-message.js';
import { decodeProtobufList, parseWatchFrames } from './decode-stream.js';
import { encodeProtobufList, encodeProtobufMessage, encodeProtobufObject, encodeWatchFrame, protobufEncodable } from './encode.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

test('a ConfigMap encodes to the bytes its upstream field numbers give', () => {
  const bytes = encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } });
  assert.ok(bytes);
  // Derived by hand from core/v1 generated.proto (ConfigMap: metadata = 1, data = 2 as map entries
  // {key = 1, value = 2}), meta/v1 ObjectMeta name = 1, and runtime.Unknown (typeMeta = 1 {apiVersion = 1,
  // kind = 2}, raw = 2, contentEncoding = 3, contentType = 4); every field is wire type 2 (length-delimited).
  const raw = '0a03' + '0a0163' + '1206' + '0a0161' + '120162';
  const typeMeta = '0a0f' + '0a02' + Buffer.from('v1').toString('hex') + '1209' + Buffer.from('ConfigMap').toString('hex');
  assert.equal(hex(bytes), '6b387300' + typeMeta + '120d' + raw + '1a00' + '2200');
});

test('a Pod scheduled to a node: nodeName is PodSpec field 10, creationTimestamp ObjectMeta 8 {seconds = 1}', () => {
  const raw = encodeProtobufMessage('v1', 'Pod', { metadata: { name: 'p', creationTimestamp: '1970-01-01T00:01:40Z' }, spec: { nodeName: 'n' } });
  assert.ok(raw);
  // metadata(1){ name(1) "p", creationTimestamp(8){ seconds(1, varint) 100 } } spec(2){ nodeName(10) "n" }
  assert.equal(hex(raw), '0a07' + '0a0170' + '4202' + '0864' + '1203' + '52016e');
});

test('inlined Go structs nest in protobuf: Volume{name = 1, volumeSource = 2{configMap = 19{localObjectReference = 1{name = 1}}}}', () => {
  const raw = encodeProtobufMessage('v1', 'Pod', { metadata: {}, spec: { volumes: [{ name: 'v', configMap: { name: 'c' } }] } });
  assert.ok(raw);
  // metadata(1) {} spec(2){ volumes(1){ name(1) "v", volumeSource(2){ configMap(19 → tag 0x9a 0x01){ localObjectReference(1){ name(1) "c" } } } }
  assert.equal(hex(raw), '0a00' + '120f' + '0a0d' + '0a0176' + '1208' + '9a0105' + '0a03' + '0a0163');
});

// Golden watch frames, derived by hand from upstream's rules, not from our reader:
// - k8s.io/apimachinery pkg/util/framer LengthDelimitedFramer: each frame is a 4-byte big-endian length;
// - the codec factory's protobuf StreamSerializer is runtime/serializer/protobuf RawSerializer: the
//   meta/v1 WatchEvent is written bare, with no "k8s\0" magic and no runtime.Unknown
//   (meta/v1 generated.proto: WatchEvent{type = 1 string, object = 2 RawExtension{raw = 1 bytes}});
// - the object in raw is written by the full protobuf Serializer: "k8s\0" + Unknown{typeMeta = 1
//   {apiVersion = 1, kind = 2}, raw = 2, contentEncoding = 3, contentType = 4};
// - client-go's watch decoder (rest/watch decoder.go) refuses an event whose type is not one of
//   ADDED, MODIFIED, DELETED, ERROR, BOOKMARK: "got invalid watch event type".
const ascii = (t: string): string => Buffer.from(t).toString('hex');
// ConfigMap{metadata = 1 ObjectMeta{name = 1 "c", resourceVersion = 6 "5"}}, enveloped: 0x23 bytes.
const CONFIGMAP = '6b387300' + '0a0f' + '0a02' + ascii('v1') + '1209' + ascii('ConfigMap') + '1208' + '0a06' + '0a0163' + '320135' + '1a00' + '2200';
// Pod{metadata = 1 ObjectMeta{resourceVersion = 6 "12"}}, enveloped: 0x1b bytes (a bookmark carries only the RV).
const BOOKMARK_POD = '6b387300' + '0a09' + '0a02' + ascii('v1') + '1203' + ascii('Pod') + '1206' + '0a04' + '32023132' + '1a00' + '2200';
// Status{status = 2 "Failure", message = 3 "too old", reason = 4 "Expired", code = 6 varint 410 (0x9a 0x03)}: 0x36 bytes.
const STATUS = '6b387300' + '0a0c' + '0a02' + ascii('v1') + '1206' + ascii('Status') + '121e' + '1207' + ascii('Failure') + '1a07' + ascii('too old') + '2207' + ascii('Expired') + '309a03' + '1a00' + '2200';

const GOLDEN: { type: string; object: Record<string, unknown>; frame: string }[] = [
  { type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', resourceVersion: '5' } }, frame: '0000002e' + '0a05' + ascii('ADDED') + '1225' + '0a23' + CONFIGMAP },
  { type: 'MODIFIED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', resourceVersion: '5' } }, frame: '00000031' + '0a08' + ascii('MODIFIED') + '1225' + '0a23' + CONFIGMAP },
  { type: 'DELETED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', resourceVersion: '5' } }, frame: '00000030' + '0a07' + ascii('DELETED') + '1225' + '0a23' + CONFIGMAP },
  { type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '12' } }, frame: '00000029' + '0a08' + ascii('BOOKMARK') + '121d' + '0a1b' + BOOKMARK_POD },
  // Go writes fields in ascending number order; any order decodes, and our encoder keeps the JSON key
  // order, so the object lists them in Go's order to compare bytes.
  { type: 'ERROR', object: { apiVersion: 'v1', kind: 'Status', status: 'Failure', message: 'too old', reason: 'Expired', code: 410 }, frame: '00000041' + '0a05' + ascii('ERROR') + '1238' + '0a36' + STATUS },
];

test('watch frames are upstream\'s: a big-endian length, the bare WatchEvent, the enveloped object inside (golden frames)', async () => {
  for (const g of GOLDEN) {
    assert.equal(hex(encodeWatchFrame(g.type, encodeProtobufObject(g.object)!)), g.frame, g.type);
    // The frame's first field is the event's type (tag 0x0a), never the magic: that is what client-go reads first.
    assert.equal(g.frame.slice(8, 10), '0a');
  }
  const events = [];
  for await (const e of parseWatchFrames(Readable.from([Buffer.from(GOLDEN.map((g) => g.frame).join(''), 'hex')]), 'golden')) events.push(e);
  assert.deepEqual(events, GOLDEN.map((g) => ({ type: g.type, object: g.object })));
});

test('a frame with the enveloped event (what older nodelet servers sent) is refused with a message that says so', async () => {
  // The BOOKMARK of issue 29 as the server used to write it: "k8s\0" Unknown{typeMeta{"", ""}, raw = WatchEvent}.
  const event = '0a08' + ascii('BOOKMARK') + '121d' + '0a1b' + BOOKMARK_POD;
  const old = '6b387300' + '0a04' + '0a00' + '1200' + '1229' + event + '1a00' + '2200';
  const body = Buffer.from((old.length / 2).toString(16).padStart(8, '0') + old, 'hex');
  await assert.rejects(async () => {
    for await (const e of parseWatchFrames(Readable.from([body]), 'watch pods')) assert.fail(`decoded ${JSON.stringify(e)}`);
  }, (err: Error & { code?: string }) => err.code === 'ERR_UNAVAILABLE' && /magic.*written bare/.test(err.message));
});

test('round-trips a Pod with status, probes, volumes and env sources (the inlined Go structs) through encode and decode', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web-1', namespace: 'default', uid: 'u-1', resourceVersion: '42', generation: 1,
      creationTimestamp: '2026-12-03T07:50:00Z', labels: { app: 'web' }, annotations: { a: '' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs-1', controller: true, blockOwnerDeletion: true }],
      managedFields: [{ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: '2026-12-03T07:50:00Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }],
    },
    spec: {
      containers: [{
        name: 'c', image: 'busybox:1', resources: { requests: { cpu: '100m' } }, ports: [{ containerPort: 80, protocol: 'TCP' }],
        env: [{ name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } }, { name: 'PW', valueFrom: { secretKeyRef: { name: 's', key: 'pw', optional: false } } }],
        envFrom: [{ configMapRef: { name: 'cm' } }],
        readinessProbe: { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' }, periodSeconds: 5, failureThreshold: 3 },
        livenessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 1 },
        volumeMounts: [{ name: 'kube-api-access-x', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }],
        securityContext: { capabilities: { drop: ['ALL'] }, runAsUser: 1000 },
      }],
      volumes: [
        { name: 'kube-api-access-x', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }, { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } }, { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } }] } },
        { name: 'cfg', configMap: { name: 'cm', defaultMode: 420 } },
        { name: 'scratch', emptyDir: {} },
      ],
      nodeName: 'node-a', restartPolicy: 'Always', enableServiceLinks: false, securityContext: {},
      tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }],
    },
    status: {
      phase: 'Running', qosClass: 'Burstable', hostIP: '10.0.0.1', hostIPs: [{ ip: '10.0.0.1' }], podIP: '10.244.0.5', podIPs: [{ ip: '10.244.0.5' }],
      startTime: '2026-12-03T07:50:01Z',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-03T07:50:03Z' }],
      containerStatuses: [{
        name: 'c', ready: true, restartCount: 0, started: true, image: 'docker.io/library/busybox:1', imageID: 'sha256:abc', containerID: 'containerd://123',
        state: { running: { startedAt: '2026-12-03T07:50:02Z' } }, lastState: { terminated: { exitCode: 0, reason: 'Completed', finishedAt: '2026-12-03T07:50:01Z' } },
      }],
    },
  };
  const back = decodeProtobufObject(encodeProtobufObject(pod)!).object;
  assert.deepEqual(back, pod);
});

test('objects the tables cannot carry are refused (undefined), so the caller answers JSON', () => {
  assert.equal(encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', futureField: 'x' } }), undefined);
  assert.equal(encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 1 } }), undefined);
  // Milliseconds do not survive a metav1.Time; a MicroTime needs its six digits.
  assert.equal(encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', creationTimestamp: '2026-12-03T07:50:00.123Z' } }), undefined);
  assert.equal(encodeProtobufObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }), undefined);
  assert.equal(protobufEncodable('example.com/v1', 'Widget'), false);
  assert.equal(protobufEncodable('v1', 'Pod'), true);
  assert.equal(encodeProtobufObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { k: 'not base64!' } }), undefined);
});

test('a list round-trips with its metadata, and a watch stream split anywhere decodes frame by frame', async () => {
  const items = ['a', 'b', 'c'].map((n) => encodeProtobufMessage('v1', 'ConfigMap', { metadata: { name: n }, data: { k: n } })!);
  const list = decodeProtobufList(encodeProtobufList('v1', 'ConfigMap', { resourceVersion: '7', continue: 'tok', remainingItemCount: 3 }, items));
  assert.deepEqual(list.metadata, { resourceVersion: '7', continue: 'tok', remainingItemCount: 3 });
  assert.deepEqual(list.items.map((i) => (i.metadata as { name: string }).name), ['a', 'b', 'c']);
  assert.equal(list.kind, 'ConfigMapList');

  const frames = Buffer.concat([
    encodeWatchFrame('ADDED', encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '1' } })!),
    encodeWatchFrame('ERROR', encodeProtobufObject({ apiVersion: 'v1', kind: 'Status', status: 'Failure', code: 410, reason: 'Expired', message: 'too old' })!),
  ]);
  const chunks = [...Array(Math.ceil(frames.length / 7)).keys()].map((i) => frames.subarray(i * 7, i * 7 + 7));
  const events = [];
  for await (const e of parseWatchFrames(Readable.from(chunks), 'watch test')) events.push(e);
  assert.deepEqual(events, [
    { type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', resourceVersion: '1' } } },
    { type: 'ERROR', object: { apiVersion: 'v1', kind: 'Status', status: 'Failure', code: 410, reason: 'Expired', message: 'too old' } },
  ]);
});

test('an autoscaling/v2 HorizontalPodAutoscaler round-trips with metrics, behavior and status (upstream field numbers)', () => {
  const hpa = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      scaleTargetRef: { kind: 'Deployment', name: 'web', apiVersion: 'apps/v1' },
      minReplicas: 1,
      maxReplicas: 5,
      metrics: [
        { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } } },
        { type: 'ContainerResource', containerResource: { name: 'memory', target: { type: 'AverageValue', averageValue: '100Mi' }, container: 'app' } },
      ],
      behavior: { scaleUp: { selectPolicy: 'Max', policies: [{ type: 'Pods', value: 4, periodSeconds: 15 }], stabilizationWindowSeconds: 0 }, scaleDown: { stabilizationWindowSeconds: 300 } },
    },
    status: {
      observedGeneration: 1, lastScaleTime: '2026-12-03T07:50:00Z', currentReplicas: 2, desiredReplicas: 4,
      currentMetrics: [{ type: 'Resource', resource: { name: 'cpu', current: { averageValue: '90m', averageUtilization: 90 } } }],
      conditions: [{ type: 'AbleToScale', status: 'True', lastTransitionTime: '2026-12-03T07:50:00Z', reason: 'SucceededRescale', message: 'm' }],
    },
  };
  // Served as JSON (not a response kind): written with the table's writer, read as a request body.
  const w = protobuf.Writer.create();
  writeMessage(w, protobufRoot().lookupType('k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler'), hpa, true);
  assert.deepEqual(decodeProtobufMessage(hpa.apiVersion, hpa.kind, w.finish()), hpa);
});
