#!/usr/bin/env node
// nodelet-cni: the CNI plugin a container runtime calls. It forwards the request (CNI_* env and
// the config on stdin) to the nodelet agent's CNI service over a unix socket and prints the
// engine's answer. It has no dependencies and no state, so it starts fast and can be replaced
// while the runtime runs. When the service is unreachable it answers the spec's error code 11
// ("try again later"), which runtimes treat as transient.
//
// Wire format (HTTP/1.1 over the unix socket): POST /v1/cni {"env": {CNI_*}, "config": <stdin>}
// → 200 with the result JSON (or empty) to print, or another status with the spec error JSON.
// nodelet-cni.c is the same program in C (faster start); this one needs only node.
import { request } from 'node:http';
import { readFileSync } from 'node:fs';

const SUPPORTED = ['0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'];
const DEFAULT_SOCKET = '/run/nodelet/cni.sock';
// Longer than any sane ADD; the runtime normally cancels us first (it kills the process).
const TIMEOUT_MS = 4 * 60 * 1000;

const command = process.env.CNI_COMMAND ?? '';
let config = {};

function reply(obj, code) {
  process.stdout.write(JSON.stringify(obj));
  process.exitCode = code;
}

function fail(code, msg, details) {
  const err = { cniVersion: typeof config.cniVersion === 'string' ? config.cniVersion : '1.0.0', code, msg };
  if (details) err.details = details;
  reply(err, 1);
}

function main() {
  let raw = '';
  try {
    raw = readFileSync(0, 'utf8');
    config = raw.trim() ? JSON.parse(raw) : {};
  } catch (e) {
    if (command !== 'VERSION') return fail(6, 'failed to decode network config', String(e && e.message));
  }
  if (command === 'VERSION') return reply({ cniVersion: '1.1.0', supportedVersions: SUPPORTED }, 0);
  if (!['ADD', 'DEL', 'CHECK', 'STATUS', 'GC'].includes(command)) return fail(4, `unknown CNI_COMMAND: ${command}`);
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (k.startsWith('CNI_')) env[k] = v;
  const socketPath = typeof config.socketPath === 'string' && config.socketPath ? config.socketPath : process.env.NODELET_CNI_SOCKET || DEFAULT_SOCKET;
  const body = JSON.stringify({ env, config });
  const req = request({ socketPath, path: '/v1/cni', method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: TIMEOUT_MS });
  req.on('timeout', () => req.destroy(Object.assign(new Error(`no answer within ${TIMEOUT_MS} ms`), { code: 'ETIMEDOUT' })));
  req.on('error', (e) => {
    fail(11, 'try again later', `nodelet CNI service at ${socketPath} is unreachable (${e.code || e.message}): start the nodelet agent, or check its log`);
  });
  req.on('response', (res) => {
    const chunks = [];
    res.on('data', (c) => chunks.push(c));
    res.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (res.statusCode === 200) {
        process.stdout.write(body);
        return;
      }
      if (!body.trim().startsWith('{')) return fail(11, 'try again later', `nodelet CNI service answered HTTP ${res.statusCode} without a CNI error`);
      process.stdout.write(body);
      process.exitCode = 1;
    });
  });
  req.end(body);
}

main();
