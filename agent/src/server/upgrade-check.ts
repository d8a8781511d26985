/**
 * Checks a streaming upgrade request (exec, attach, portForward) before anything is spliced or
 * handed to `ws`, so that a bad handshake is answered with a Kubernetes `Status`:
 *
 * - SPDY (`Upgrade: SPDY/3.1`, kubectl's fallback and its port-forward): the client must offer, in
 *   `X-Stream-Protocol-Version`, one protocol the runtime speaks; otherwise 403, as kubelet answers.
 * - WebSocket: RFC 6455's checks (GET, Sec-WebSocket-Key, Sec-WebSocket-Version 13); a client that
 *   offers subprotocols must offer one we know.
 */
import type { IncomingMessage } from 'node:http';
import { failureStatus, type Status } from '@nodelet/api/agent';
import { PORT_FORWARD_PROTOCOL, REMOTE_COMMAND_PROTOCOLS } from '@nodelet/cri-client';
import { EXEC_PROTOCOLS } from './exec-bridge.js';

const KEY = /^[+/0-9A-Za-z]{22}==$/;

/** WebSocket subprotocols of port-forward that containerd serves (the unversioned one and v4). */
export const PORT_FORWARD_WS_PROTOCOLS = ['v4.channel.k8s.io', 'portforward.k8s.io'] as const;

export type StreamKind = 'exec' | 'attach' | 'portForward';
export type UpgradeType = { type: 'spdy' } | { type: 'websocket' };

function list(v: string | string[] | undefined): string[] {
  return (Array.isArray(v) ? v : [v ?? ''])
    .flatMap((x) => x.split(','))
    .map((p) => p.trim())
    .filter((p) => p !== '');
}

/** The kind of upgrade, or the failure to answer. */
export function checkStreamUpgrade(req: IncomingMessage, kind: StreamKind): UpgradeType | Status {
  const upgrade = String(req.headers.upgrade ?? '').toLowerCase();
  if (upgrade === 'spdy/3.1') {
    const supported: readonly string[] = kind === 'portForward' ? [PORT_FORWARD_PROTOCOL] : REMOTE_COMMAND_PROTOCOLS;
    const offered = list(req.headers['x-stream-protocol-version']);
    if (!offered.some((p) => supported.includes(p))) {
      return failureStatus(403, 'Forbidden', `unable to upgrade: unable to negotiate protocol: client supports [${offered.join(' ')}], server accepts [${supported.join(' ')}]`);
    }
    return { type: 'spdy' };
  }
  if (upgrade !== 'websocket') {
    return failureStatus(400, 'BadRequest', `${kind} needs an upgrade to SPDY/3.1 or to a WebSocket (v5.channel.k8s.io)`);
  }
  if (req.method !== 'GET') return failureStatus(405, 'MethodNotAllowed', `WebSocket upgrades must be GET, not ${String(req.method)}`);
  if (!KEY.test(String(req.headers['sec-websocket-key'] ?? ''))) return failureStatus(400, 'BadRequest', 'missing or invalid Sec-WebSocket-Key header');
  if (req.headers['sec-websocket-version'] !== '13') return failureStatus(400, 'BadRequest', 'unsupported Sec-WebSocket-Version: only 13 is supported');
  const offered = list(req.headers['sec-websocket-protocol']);
  const supported: readonly string[] = kind === 'portForward' ? PORT_FORWARD_WS_PROTOCOLS : EXEC_PROTOCOLS;
  if (offered.length > 0 && !offered.some((p) => supported.includes(p))) {
    return failureStatus(400, 'BadRequest', `requested protocol(s) are not supported: [${offered.join(' ')}]; supports [${supported.join(' ')}]`);
  }
  return { type: 'websocket' };
}

export function isStatus(x: UpgradeType | Status): x is Status {
  return (x as Status).kind === 'Status';
}
