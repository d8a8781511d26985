// The API server's listener asks the kernel for an accept queue of net.core.somaxconn (Go's
// listeners, kube-apiserver's among them), not Node's 511: a burst of node connections overflowed
// 511 in bench/density, and every dropped connection waited seconds for a resent SYN.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { listenBacklog } from '@nodelet/api';
import { startTestApiServer } from './testing/test-server.js';

test('the API server listens with the kernel\'s somaxconn as its accept queue', async (t) => {
  const somaxconn = Number.parseInt(readFileSync('/proc/sys/net/core/somaxconn', 'utf8'), 10);
  assert.equal(listenBacklog(), somaxconn);
  const { url, close } = await startTestApiServer();
  t.after(close);
  const port = new URL(url).port;
  // ss reads the listener from the kernel: for a listening socket Send-Q is the accept queue's size.
  const { stdout } = await promisify(execFile)('ss', ['-Hltn', `sport = :${port}`]);
  const [state, , sendQ] = stdout.trim().split(/\s+/);
  assert.equal(state, 'LISTEN', stdout);
  assert.equal(Number(sendQ), somaxconn, `accept queue ${sendQ}, kernel allows ${somaxconn}`);
});
