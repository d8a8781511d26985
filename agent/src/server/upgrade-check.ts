/**
 * Checks an exec upgrade request before it reaches `ws`, so that a bad WebSocket handshake is
 * answered with a Kubernetes `Status` (ws itself would answer with a text body). The checks are
 * RFC 6455's (method, Upgrade, Sec-WebSocket-Key, Sec-WebSocket-Version) and the subprotocol:
 * a client that offers protocols must offer one of {@link EXEC_PROTOCOLS}; one that offers none
 * gets the unversioned channel protocol.
 */
import type { IncomingMessage } from 'node:http';
import { failureStatus, type Status } from '@nodelet/api';
import { EXEC_PROTOCOLS } from './exec-bridge.js';

const KEY = /^[+/0-9A-Za-z]{22}==$/;

/** The failure to answer, or `undefined` when `ws` may complete the handshake. */
export function checkExecUpgrade(req: IncomingMessage): Status | undefined {
  if (req.method !== 'GET') return failureStatus(405, 'MethodNotAllowed', `exec upgrades must be GET, not ${String(req.method)}`);
  if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
    return failureStatus(400, 'BadRequest', 'exec needs a WebSocket upgrade (v5.channel.k8s.io or v4.channel.k8s.io); SPDY is not supported');
  }
  if (!KEY.test(String(req.headers['sec-websocket-key'] ?? ''))) return failureStatus(400, 'BadRequest', 'missing or invalid Sec-WebSocket-Key header');
  if (req.headers['sec-websocket-version'] !== '13') return failureStatus(400, 'BadRequest', 'unsupported Sec-WebSocket-Version: only 13 is supported');
  const offered = String(req.headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (offered.length > 0 && !offered.some((p) => (EXEC_PROTOCOLS as readonly string[]).includes(p))) {
    return failureStatus(400, 'BadRequest', `requested protocol(s) are not supported: [${offered.join(' ')}]; supports [${EXEC_PROTOCOLS.join(' ')}]`);
  }
  return undefined;
}
