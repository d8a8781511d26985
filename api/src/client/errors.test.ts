import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errCode, type ErrorCode } from '@nodelet/base';
import { errorFromResponse, errorFromSocket, errorFromWatchStatus, retryAfterHeaderSeconds, statusOf } from './errors.js';

const status = (code: number, reason: string): string => JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: `m${code}` });

test('HTTP status and reason map to stable codes and retryability', () => {
  const cases: Array<[number, string, ErrorCode, boolean]> = [
    [400, 'BadRequest', 'ERR_INVALID_ARGUMENT', false],
    [401, 'Unauthorized', 'ERR_UNAUTHENTICATED', false],
    [403, 'Forbidden', 'ERR_PERMISSION_DENIED', false],
    [404, 'NotFound', 'ERR_NOT_FOUND', false],
    [405, 'MethodNotAllowed', 'ERR_UNIMPLEMENTED', false],
    [409, 'AlreadyExists', 'ERR_ALREADY_EXISTS', false],
    [409, 'Conflict', 'ERR_CONFLICT', true],
    [410, 'Expired', 'ERR_GONE', false],
    [415, 'UnsupportedMediaType', 'ERR_INVALID_ARGUMENT', false],
    [422, 'Invalid', 'ERR_INVALID_ARGUMENT', false],
    [429, 'TooManyRequests', 'ERR_UNAVAILABLE', true],
    [500, 'InternalError', 'ERR_UNAVAILABLE', true],
    [503, 'ServiceUnavailable', 'ERR_UNAVAILABLE', true],
    [504, 'Timeout', 'ERR_UNAVAILABLE', true],
  ];
  for (const [http, reason, code, retryable] of cases) {
    const e = errorFromResponse(http, status(http, reason), 'GET /x');
    assert.equal(errCode(e), code, `${http} ${reason}`);
    assert.equal(e.retryable, retryable, `${http} ${reason} retryable`);
    assert.equal(statusOf(e)?.reason, reason);
    assert.equal(e.httpStatus, http);
    assert.equal(e.message, `GET /x: m${http} (${reason})`);
  }
});

test('a non-Status body gets a synthesised Status; Retry-After is read', () => {
  const e = errorFromResponse(502, '<html>bad gateway</html>', 'GET /x', '7');
  assert.equal(errCode(e), 'ERR_UNAVAILABLE');
  assert.deepEqual(e.status, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 502, message: '<html>bad gateway</html>' });
  assert.equal(e.retryAfterSeconds, 7);
  assert.equal(errorFromResponse(500, '', 'GET /x').status.message, 'HTTP 500');
});

test('watch ERROR statuses translate like replies', () => {
  const e = errorFromWatchStatus({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 1 (5)' }, 'watch pods');
  assert.equal(errCode(e), 'ERR_GONE');
  assert.match(e.message, /too old resource version/);
});

test('socket errors: refused/reset are retryable ERR_UNAVAILABLE, TLS failures are not', () => {
  const refused = errorFromSocket(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }), 'GET /x', 'https://127.0.0.1:1');
  assert.equal(errCode(refused), 'ERR_UNAVAILABLE');
  assert.equal(refused.retryable, true);
  const reset = errorFromSocket(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), 'GET /x', 's');
  assert.equal(reset.retryable, true);
  const tls = errorFromSocket(Object.assign(new Error('self-signed'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }), 'GET /x', 'https://h:6443');
  assert.equal(errCode(tls), 'ERR_FAILED_PRECONDITION');
  assert.equal(tls.retryable, false);
  assert.match(tls.message, /certificate-authority/);
  assert.equal(statusOf(tls), undefined);
  assert.equal(statusOf(new Error('x')), undefined);
});

test('Retry-After: whole seconds only, the first of repeated headers', () => {
  assert.equal(retryAfterHeaderSeconds('7'), 7);
  assert.equal(retryAfterHeaderSeconds([' 3 ', '9']), 3);
  assert.equal(retryAfterHeaderSeconds('0'), 0);
  for (const bad of [undefined, '', '-1', '1.5', '5s', 'Wed, 21 Oct 2015 07:28:00 GMT']) assert.equal(retryAfterHeaderSeconds(bad), undefined, String(bad));
});
