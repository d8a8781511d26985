// The exec bridge between a client WebSocket and the runtime's streaming server (both real ws
// servers on loopback): a side that does not read pauses the other instead of growing the
// agent's buffers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { noopLogger, pollUntil } from '@nodelet/base';
import type { RuntimeService } from '../runtime/cri.js';
import { bridgeExec, HIGH_WATER_BYTES } from './exec-bridge.js';

const FRAME = 64 * 1024;
/** Far more than loopback socket buffers hold, so only backpressure can stop the sender. */
const FLOOD = 96 * 1024 * 1024;

interface Rig {
  /** The agent's side of the client connection (what bridgeExec writes to). */
  agentSide: WebSocket;
  /** kubectl's end. */
  client: WebSocket;
  /** The runtime's end. */
  runtime: WebSocket;
}

async function rig(t: import('node:test').TestContext): Promise<Rig> {
  const runtimeWss = new WebSocketServer({ port: 0, host: '127.0.0.1', handleProtocols: () => 'v4.channel.k8s.io' });
  await new Promise((r) => runtimeWss.once('listening', r));
  const runtimeConn = new Promise<WebSocket>((r) => runtimeWss.once('connection', r));
  const runtimeSvc = { exec: async () => ({ url: `http://127.0.0.1:${(runtimeWss.address() as AddressInfo).port}/exec/x` }) } as unknown as RuntimeService;
  const agentWss = new WebSocketServer({ noServer: true, handleProtocols: () => 'v5.channel.k8s.io' });
  const agentSide = new Promise<WebSocket>((resolve) => {
    const srv = http.createServer();
    srv.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) =>
      agentWss.handleUpgrade(req, socket, head, (ws) => {
        resolve(ws);
        void bridgeExec({ client: ws, runtime: runtimeSvc, containerId: 'c', query: new URLSearchParams('command=cat&stdin=true'), log: noopLogger });
      }),
    );
    srv.listen(0, '127.0.0.1', () => {
      const client = new WebSocket(`ws://127.0.0.1:${(srv.address() as AddressInfo).port}/exec`, ['v5.channel.k8s.io']);
      t.after(() => {
        client.terminate();
        for (const c of [...agentWss.clients, ...runtimeWss.clients]) c.terminate();
        srv.closeAllConnections();
        srv.close();
        runtimeWss.close();
      });
      clients.push(client);
    });
  });
  const clients: WebSocket[] = [];
  const [agent, runtime] = await Promise.all([agentSide, runtimeConn]);
  await pollUntil('client open', () => clients[0]?.readyState === WebSocket.OPEN, { timeoutMs: 5000, intervalMs: 10 });
  return { agentSide: agent, client: clients[0]!, runtime };
}

/** Sends FRAME-sized frames until FLOOD bytes went out or the peer pushed back for good. */
async function flood(ws: WebSocket, channel: number): Promise<number> {
  const frame = Buffer.alloc(FRAME, 0x61);
  frame[0] = channel;
  let sent = 0;
  let stalledSince = 0;
  while (sent < FLOOD) {
    if (ws.bufferedAmount > 4 * FRAME) {
      // The peer stopped reading; give it a while, then report what got through.
      stalledSince ||= Date.now();
      if (Date.now() - stalledSince > 1000) break;
      await new Promise((r) => setTimeout(r, 10));
      continue;
    }
    stalledSince = 0;
    ws.send(frame);
    sent += FRAME;
  }
  return sent;
}

test('exec bridge: a client that stops reading stalls the runtime stream; the agent buffers at most the high-water mark', { timeout: 60_000 }, async (t) => {
  const r = await rig(t);
  r.client.pause(); // kubectl reads nothing
  let peak = 0;
  const watch = setInterval(() => (peak = Math.max(peak, r.agentSide.bufferedAmount)), 5);
  t.after(() => clearInterval(watch));
  const sent = await flood(r.runtime, 1);
  clearInterval(watch);
  peak = Math.max(peak, r.agentSide.bufferedAmount);
  assert.ok(sent < FLOOD, `the runtime could send all ${FLOOD} bytes: nothing pushed back`);
  assert.ok(peak <= HIGH_WATER_BYTES + 2 * FRAME, `the agent buffered ${peak} bytes for the client`);
});

test('exec bridge: a runtime that stops reading stalls the client stdin the same way', { timeout: 60_000 }, async (t) => {
  const r = await rig(t);
  r.runtime.pause(); // the process does not read its stdin
  const sent = await flood(r.client, 0);
  assert.ok(sent < FLOOD, `the client could send all ${FLOOD} bytes: nothing pushed back`);
});
