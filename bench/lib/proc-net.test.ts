import { test } from 'node:test';
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { pollUntil } from '@nodelet/base';
import { acceptQueue, establishedTo, listenOverflows } from './proc-net.js';

test('proc-net reads a real listener: its established clients by remote port, its accept queue, the kernel\'s overflow count', async (t) => {
  const accepted: net.Socket[] = [];
  const srv = net.createServer((s) => void accepted.push(s));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const client = net.connect((srv.address() as AddressInfo).port, '127.0.0.1');
  t.after(async () => {
    client.destroy();
    for (const s of accepted) s.destroy();
    await new Promise<void>((r) => srv.close(() => r()));
  });
  await new Promise<void>((r) => client.once('connect', () => r()));
  const port = (srv.address() as AddressInfo).port;
  const remote = `${client.localPort!.toString(16).toUpperCase().padStart(4, '0')}`;
  await pollUntil('the client seen established', () => establishedTo(port).some((c) => c.endsWith(`:${remote}`)), { timeoutMs: 5000, intervalMs: 20 });
  await pollUntil('the connection accepted', () => accepted.length === 1, { timeoutMs: 5000, intervalMs: 20 });
  assert.equal(acceptQueue(port), 0, 'nothing waits to be accepted once the server took it');
  assert.ok(Number.isInteger(listenOverflows()) && listenOverflows() >= 0);
});
