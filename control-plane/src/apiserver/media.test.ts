import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StatusError } from './status.js';
import { encodeProtobufObject } from '@nodelet/api';
import { decodeObjectBody, MAX_NESTING_DEPTH, parseJson, parseMediaTypes, wantsAggregatedDiscovery, wantsTable } from './media.js';

test('Accept parameters are matched exactly (v2 is not v2beta1)', () => {
  const kubectl132 = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  const kubectl128 = 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';
  assert.equal(wantsAggregatedDiscovery(kubectl132), true);
  assert.equal(wantsAggregatedDiscovery(kubectl128), false);
  assert.equal(wantsTable('application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json'), true);
  assert.equal(wantsTable('application/json'), false);
  assert.deepEqual(parseMediaTypes('application/json; charset="utf-8"')[0], { type: 'application/json', params: { charset: 'utf-8' } });
});

test('bodies decode by content type; unknown types are 415, bad JSON/YAML 400', () => {
  assert.deepEqual(decodeObjectBody('application/yaml', Buffer.from('kind: Pod\nmetadata: {name: x}\n')), { kind: 'Pod', metadata: { name: 'x' } });
  assert.deepEqual(decodeObjectBody(undefined, Buffer.from('{"kind":"Pod"}')), { kind: 'Pod' });
  const code = (fn: () => unknown): number | undefined => {
    try {
      fn();
    } catch (e) {
      return e instanceof StatusError ? e.code : -1;
    }
    return undefined;
  };
  assert.equal(code(() => decodeObjectBody('text/plain', Buffer.from('x'))), 415);
  assert.equal(code(() => decodeObjectBody('application/json', Buffer.from('{'))), 400);
  assert.equal(code(() => decodeObjectBody('application/yaml', Buffer.from('a: 1\n---\nb: 2\n'))), 400);
  assert.equal(code(() => decodeObjectBody('application/json', Buffer.from('"str"'))), 400);
});

test('decoded bodies nested deeper than 1000 levels are 400, in JSON and YAML', () => {
  const deepJson = Buffer.from(`{"metadata":{"name":"x"},"data":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`);
  assert.throws(() => decodeObjectBody('application/json', deepJson), (err: { code?: number; message?: string }) => err.code === 400 && /exceeded max depth of 1000$/.test(err.message ?? ''));
  // The outer object is level 1: 999 more fit, 1000 more do not.
  const nested = (levels: number): Buffer => Buffer.from(`{"a":${'['.repeat(levels)}${']'.repeat(levels)}}`);
  assert.equal(MAX_NESTING_DEPTH, 1000);
  assert.deepEqual(Object.keys(decodeObjectBody('application/json', nested(999))), ['a']);
  assert.throws(() => decodeObjectBody('application/json', nested(1000)), (err: { code?: number }) => err.code === 400);
  assert.throws(() => parseJson(deepJson), (err: { code?: number }) => err.code === 400);
  const deepYaml = Buffer.from(`metadata: {name: x}\ndata: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`);
  assert.throws(() => decodeObjectBody('application/yaml', deepYaml), (err: { code?: number }) => err.code === 400);
  const fine = Buffer.from(`{"a":${'['.repeat(100)}${']'.repeat(100)}}`);
  assert.deepEqual(Object.keys(decodeObjectBody('application/json', fine)), ['a']);
});

test('a protobuf body whose embedded JSON (managedFields) nests past the bound is 400', () => {
  let deep: unknown = {};
  for (let i = 0; i < 2_000; i++) deep = { 'f:a': deep };
  const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', managedFields: [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: deep }] } };
  const body = Buffer.from(encodeProtobufObject(cm)!);
  assert.throws(() => decodeObjectBody('application/vnd.kubernetes.protobuf', body), (err: { code?: number; message?: string }) => err.code === 400 && /max depth/.test(err.message ?? ''));
  const shallow = Buffer.from(encodeProtobufObject({ ...cm, metadata: { ...cm.metadata, managedFields: [{ ...cm.metadata.managedFields[0], fieldsV1: { 'f:data': {} } }] } })!);
  assert.equal(decodeObjectBody('application/vnd.kubernetes.protobuf', shallow).kind, 'ConfigMap');
});
