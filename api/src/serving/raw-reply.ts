/**
 * Kubernetes `Status` failure replies written where no `ServerResponse` exists: on a socket the
 * HTTP parser gave up on (`clientError`), on an upgrade socket, or on a `CONNECT` tunnel request.
 *
 * The reply ends with `Connection: close` and a lingering close: the write side is ended at once,
 * the socket is destroyed a moment later. Destroying it at once while the peer is still sending
 * (an oversized header, say) makes the kernel answer with RST, and the peer may then lose the
 * reply it has not read yet.
 */
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Status, StatusDetails } from '../types/index.js';

/** How long a rejected socket may keep sending before it is destroyed. */
export const LINGER_MS = 1000;

/** A `Status` with `status: Failure`, as every Kubernetes endpoint answers an error. */
export function failureStatus(code: number, reason: string, message: string, details?: StatusDetails): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/**
 * Writes a complete HTTP/1.1 reply carrying `status` to a raw socket and closes it (see the
 * file comment). Idempotent enough for error paths: a socket that can no longer be written is
 * only destroyed.
 */
export function writeRawStatus(socket: Duplex, status: Status, headers: Record<string, string> = {}): void {
  if (socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const code = status.code ?? 500;
  const body = JSON.stringify(status);
  const lines = [`HTTP/1.1 ${code} ${STATUS_CODES[code] ?? 'Error'}`, 'Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  // A write error on a socket being rejected is no news; without a listener it would be thrown.
  socket.on('error', () => socket.destroy());
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}
