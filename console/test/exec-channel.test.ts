// The terminal's exec client against a loopback WebSocket server that plays the API server's
// part: the subprotocols offered (the token one first, never the token in the URL), stdin frames
// echoed on stdout, resize frames, v5's close of stdin, and the error channel's Status ending it.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { pollUntil } from '@nodelet/base';
import { WebSocket, WebSocketServer } from 'ws';
import { bearerProtocol, Channel, EXEC_PROTOCOLS, ExecSession, execPath, type SocketLike } from '../src/exec-channel.js';

interface Fake {
  url: string;
  offered: string[][];
  paths: string[];
  resizes: unknown[];
  closedStdin: boolean;
  close(): Promise<void>;
}

/** A server that picks `version` among the offered subprotocols and echoes stdin until "exit". */
async function fakeExec(version: string, exitStatus: object): Promise<Fake> {
  const server = http.createServer();
  const wss = new WebSocketServer({ server, handleProtocols: (set) => (set.has(version) ? version : false) });
  const f: Fake = { url: '', offered: [], paths: [], resizes: [], closedStdin: false, close: async () => undefined };
  wss.on('headers', (_h, req) => {
    f.offered.push(String(req.headers['sec-websocket-protocol']).split(',').map((s) => s.trim()));
    f.paths.push(req.url ?? '');
  });
  wss.on('connection', (ws) => {
    ws.on('message', (data: Buffer) => {
      const body = data.subarray(1);
      if (data[0] === Channel.Stdin) {
        const text = body.toString();
        if (text.includes('exit')) {
          ws.send(Buffer.concat([Buffer.of(Channel.Error), Buffer.from(JSON.stringify(exitStatus))]));
          ws.close(1000);
        } else ws.send(Buffer.concat([Buffer.of(Channel.Stdout), body]));
      } else if (data[0] === Channel.Resize) f.resizes.push(JSON.parse(body.toString()));
      else if (data[0] === Channel.Close && data[1] === Channel.Stdin) f.closedStdin = true;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  f.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  f.close = async () => {
    for (const c of wss.clients) c.terminate();
    wss.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  };
  return f;
}

function open(f: Fake, token: string): { session: ExecSession; out: () => string; exits: Array<{ success: boolean; message: string }> } {
  let out = '';
  const exits: Array<{ success: boolean; message: string }> = [];
  const socket = new WebSocket(f.url + execPath('default', 'web-1', 'app'), [bearerProtocol(token), ...EXEC_PROTOCOLS]);
  const session = new ExecSession(socket as unknown as SocketLike, {
    output: (d) => void (out += new TextDecoder().decode(d)),
    exit: (e) => void exits.push(e),
  });
  return { session, out: () => out, exits };
}

test('exec path and the token protocol', () => {
  assert.equal(execPath('default', 'web-1', 'app'), '/api/v1/namespaces/default/pods/web-1/exec?container=app&command=sh&stdin=true&stdout=true&tty=true');
  // Unpadded base64url of the UTF-8 bytes: "é?>" has a '+'/'/' in standard base64.
  assert.equal(bearerProtocol('é?>'), `base64url.bearer.authorization.k8s.io.${Buffer.from('é?>').toString('base64url')}`);
  assert.ok(!bearerProtocol('a').endsWith('='));
});

test('v5: input before open is sent once open, stdout shown, resize, stdin closed, the Status ends it', async (t) => {
  const f = await fakeExec('v5.channel.k8s.io', { metadata: {}, status: 'Success' });
  t.after(() => f.close());
  const s = open(f, 'secret-token');
  s.session.input('echo hi\r');
  await pollUntil('the echo', () => s.out().includes('echo hi'), { timeoutMs: 5000 });
  assert.equal(s.session.protocol, 'v5.channel.k8s.io');
  assert.deepEqual(f.offered, [[bearerProtocol('secret-token'), 'v5.channel.k8s.io', 'v4.channel.k8s.io']]);
  assert.ok(!f.paths[0]!.includes('secret'), f.paths[0]);
  s.session.resize(120, 40);
  s.session.resize(0, 10); // not a size: not sent
  await pollUntil('the resize', () => f.resizes.length === 1, { timeoutMs: 5000 });
  assert.deepEqual(f.resizes, [{ Width: 120, Height: 40 }]);
  s.session.closeStdin();
  await pollUntil('stdin closed', () => f.closedStdin, { timeoutMs: 5000 });
  s.session.input('exit\r');
  await pollUntil('the exit', () => s.exits.length === 1, { timeoutMs: 5000 });
  assert.deepEqual(s.exits, [{ success: true, message: 'exited' }]);
  s.session.input('ignored after exit');
});

test('v4: a failure Status is reported with its message; no v5 close frame is sent', async (t) => {
  const message = 'command terminated with non-zero exit code: error executing command [sh], exit code 3';
  const f = await fakeExec('v4.channel.k8s.io', { metadata: {}, status: 'Failure', reason: 'NonZeroExitCode', message });
  t.after(() => f.close());
  const s = open(f, 't');
  await pollUntil('open', () => s.session.protocol === 'v4.channel.k8s.io', { timeoutMs: 5000 });
  s.session.closeStdin();
  s.session.input('exit\r');
  await pollUntil('the exit', () => s.exits.length === 1, { timeoutMs: 5000 });
  assert.deepEqual(s.exits, [{ success: false, message }]);
  assert.equal(f.closedStdin, false);
});

test('a refused upgrade ends the session with the close code', async (t) => {
  const f = await fakeExec('v9.none', {});
  t.after(() => f.close());
  const s = open(f, 't');
  await pollUntil('the exit', () => s.exits.length === 1, { timeoutMs: 5000 });
  assert.equal(s.exits[0]!.success, false);
});
