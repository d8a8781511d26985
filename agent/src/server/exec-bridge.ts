/**
 * Bridges an exec WebSocket from the API server's proxy (kubectl 1.32 negotiates
 * `v5.channel.k8s.io`) to the runtime's streaming server, which speaks `v4.channel.k8s.io`
 * (containerd 1.6 refuses v5 with 403; reference/cri-and-crictl.md §4).
 *
 *   kubectl ─v5─▶ API server ─splice─▶ node API ─(this)─v4─▶ containerd streaming URL from CRI Exec
 *
 * Frames are `[channel byte][payload]` in both versions: 0 stdin, 1 stdout, 2 stderr, 3 status,
 * 4 resize pass through unchanged. v5's channel 255 (close stdin) has no v4 equivalent.
 * HACK(v4 has no half-close): a close-stdin frame is dropped; the command ends by itself.
 */
import WebSocket from 'ws';
import { describeError, type Logger } from '@nodelet/base';
import { toWebSocketUrl } from '@nodelet/cri-client';
import type { RuntimeService } from '../runtime/cri.js';

export const EXEC_PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io', 'channel.k8s.io'] as const;
const CLOSE_STDIN = 255;

const flag = (q: URLSearchParams, name: string, dflt: boolean): boolean => {
  const v = q.get(name);
  if (v === null) return dflt;
  return v === 'true' || v === '1';
};

export async function bridgeExec(o: { client: WebSocket; runtime: RuntimeService; containerId: string; query: URLSearchParams; log: Logger }): Promise<void> {
  const { client } = o;
  const cmd = o.query.getAll('command');
  const fail = (message: string): void => {
    const status = JSON.stringify({ metadata: {}, status: 'Failure', message, reason: 'InternalError', code: 500 });
    client.send(Buffer.concat([Buffer.from([3]), Buffer.from(status)]));
    client.close(1000);
  };
  if (cmd.length === 0) return fail('exec: no command given (use ?command=…)');
  const early: Buffer[] = [];
  const link: { upstream?: WebSocket } = {};
  client.on('message', (data: Buffer) => {
    const frame = Buffer.isBuffer(data) ? data : Buffer.from(data as ArrayBuffer);
    if (frame[0] === CLOSE_STDIN) return;
    if (link.upstream?.readyState === WebSocket.OPEN) link.upstream.send(frame);
    else early.push(frame);
  });
  client.on('close', () => link.upstream?.close());
  let url: string;
  try {
    const tty = flag(o.query, 'tty', false);
    const res = await o.runtime.exec({
      containerId: o.containerId,
      cmd,
      tty,
      stdin: flag(o.query, 'stdin', false) || flag(o.query, 'input', false),
      stdout: flag(o.query, 'stdout', true) || flag(o.query, 'output', false),
      stderr: tty ? false : flag(o.query, 'stderr', true),
    });
    url = res.url;
  } catch (err) {
    return fail(`exec failed: ${describeError(err)}`);
  }
  const upstream = new WebSocket(toWebSocketUrl(url), ['v4.channel.k8s.io']);
  link.upstream = upstream;
  upstream.on('open', () => {
    for (const f of early.splice(0)) upstream.send(f);
  });
  upstream.on('message', (data: Buffer) => {
    if (client.readyState === WebSocket.OPEN) client.send(data);
  });
  upstream.on('close', () => {
    if (client.readyState === WebSocket.OPEN) client.close(1000);
  });
  upstream.on('error', (err) => {
    o.log.warn({ err: describeError(err) }, 'Runtime exec stream failed');
    if (client.readyState === WebSocket.OPEN) fail(`runtime stream: ${describeError(err)}`);
  });
}
