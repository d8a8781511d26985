/**
 * A gRPC-free CRI readiness probe: one `runtime.v1.RuntimeService/Version` call over HTTP/2
 * on the runtime's unix socket (gRPC framing by hand: a 5-byte prefix + the protobuf message).
 * containerd's CRI plugin answers every RPC with "server is not initialized yet" until its
 * service loop runs, so a `grpc-status: 0` reply means CRI is really serving. lab-runtime may
 * not import @grpc/grpc-js (only cri-client does); node:http2 is enough for one unary call.
 */
import { connect, constants } from 'node:http2';
import { connect as netConnect } from 'node:net';
import { AgentError } from '@nodelet/base';

export interface CriVersion {
  runtimeName: string;
  runtimeVersion: string;
  runtimeApiVersion: string;
}

/** Calls Version once. Rejects ERR_UNAVAILABLE (with the runtime's message) when CRI is not serving. */
export function probeCri(socketPath: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<CriVersion> {
  return new Promise((resolve, reject) => {
    const session = connect('http://localhost', { createConnection: () => netConnect(socketPath) });
    let settled = false;
    const finish = (err: Error | undefined, value?: CriVersion): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      session.destroy();
      if (err) reject(err);
      else resolve(value!);
    };
    const onAbort = (): void => finish(opts.signal!.reason instanceof Error ? opts.signal!.reason : new DOMException('aborted', 'AbortError'));
    const timer = setTimeout(() => finish(new AgentError('ERR_DEADLINE_EXCEEDED', `CRI at "${socketPath}" did not answer Version within ${opts.timeoutMs ?? 2000} ms`)), opts.timeoutMs ?? 2000);
    if (opts.signal?.aborted) return onAbort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    session.on('error', (err) => finish(new AgentError('ERR_UNAVAILABLE', `cannot connect to CRI at "${socketPath}": ${err.message}`, { cause: err })));

    const req = session.request({
      [constants.HTTP2_HEADER_METHOD]: 'POST',
      [constants.HTTP2_HEADER_PATH]: '/runtime.v1.RuntimeService/Version',
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    const chunks: Buffer[] = [];
    let status: string | undefined;
    let message = '';
    req.on('response', (headers) => {
      if (headers['grpc-status'] !== undefined) status = String(headers['grpc-status']);
      if (headers['grpc-message'] !== undefined) message = decodeURIComponent(String(headers['grpc-message']));
    });
    req.on('trailers', (trailers) => {
      if (trailers['grpc-status'] !== undefined) status = String(trailers['grpc-status']);
      if (trailers['grpc-message'] !== undefined) message = decodeURIComponent(String(trailers['grpc-message']));
    });
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('error', (err) => finish(new AgentError('ERR_UNAVAILABLE', `CRI Version call to "${socketPath}" failed: ${err.message}`, { cause: err })));
    req.on('end', () => {
      if (status !== '0') {
        finish(new AgentError('ERR_UNAVAILABLE', `CRI at "${socketPath}" is not ready: ${message || `grpc-status ${status ?? 'missing'}`}`));
        return;
      }
      const body = Buffer.concat(chunks);
      finish(undefined, decodeVersionResponse(body.subarray(5)));
    });
    // VersionRequest{version: "0.1.0"}: field 1, wire type 2.
    const msg = Buffer.from([0x0a, 5, ...Buffer.from('0.1.0')]);
    const frame = Buffer.alloc(5 + msg.length);
    frame.writeUInt8(0, 0);
    frame.writeUInt32BE(msg.length, 1);
    msg.copy(frame, 5);
    req.end(frame);
  });
}

/** VersionResponse: 1 version, 2 runtime_name, 3 runtime_version, 4 runtime_api_version (all strings). */
function decodeVersionResponse(buf: Buffer): CriVersion {
  const fields: Record<number, string> = {};
  let i = 0;
  while (i < buf.length) {
    const [key, k] = varint(buf, i);
    i = k;
    if ((key & 7) !== 2) break; // only length-delimited fields in this message
    const [len, j] = varint(buf, i);
    fields[key >> 3] = buf.subarray(j, j + len).toString('utf8');
    i = j + len;
  }
  return { runtimeName: fields[2] ?? '', runtimeVersion: fields[3] ?? '', runtimeApiVersion: fields[4] ?? '' };
}

function varint(buf: Buffer, at: number): [number, number] {
  let v = 0;
  let shift = 0;
  let i = at;
  while (i < buf.length) {
    const b = buf[i++]!;
    v |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
  }
  return [v, i];
}
