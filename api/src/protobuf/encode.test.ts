import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { decodeProtobufObject } from './decode.js';
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

test('a watch frame is a big-endian length, then the WatchEvent {type = 1, object = 2 {raw = 1}} envelope', () => {
  const obj = encodeProtobufObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } })!;
  const frame = encodeWatchFrame('ADDED', obj);
  const event = '0a05' + Buffer.from('ADDED').toString('hex') + '12' + (obj.length + 2).toString(16).padStart(2, '0') + '0a' + obj.length.toString(16).padStart(2, '0') + hex(obj);
  const envelope = '6b387300' + '0a04' + '0a00' + '1200' + '12' + (event.length / 2).toString(16).padStart(2, '0') + event + '1a00' + '2200';
  assert.equal(frame.length, 4 + envelope.length / 2);
  assert.equal(hex(frame), (envelope.length / 2).toString(16).padStart(8, '0') + envelope);
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
