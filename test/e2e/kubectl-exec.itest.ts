// `kubectl logs` and `kubectl exec` through the server's node proxy to a stand-in agent (the real
// agent is tested in the agent suites). The stand-in checks the server's client certificate
// against the cluster CA and speaks v5.channel.k8s.io like kubelet.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { WebSocketServer } from 'ws';
import { issueCertificate, loadCa } from '@nodelet/control-plane';
import { kubectlUnavailableReason, startKubectlEnv, type KubectlEnv } from './kubectl-harness.js';
import { pollUntil } from '@nodelet/base';

describe('kubectl logs/exec through the node proxy', { skip: kubectlUnavailableReason() }, () => {
  let env: KubectlEnv;
  let agent: https.Server;
  const seen: Array<{ path: string; clientCn: string | undefined }> = [];
  let releaseSecondLine!: () => void;
  const secondLine = new Promise<void>((r) => (releaseSecondLine = r));
  before(async () => {
    env = await startKubectlEnv();
    const pki = join(env.dir, 'pki');
    const ca = await loadCa({ certPem: await readFile(join(pki, 'ca.crt'), 'utf8'), keyPem: await readFile(join(pki, 'ca.key'), 'utf8') });
    const serving = await issueCertificate(ca, { commonName: 'node-1', usage: 'server', ips: ['127.0.0.1'] });
    agent = https.createServer({ cert: serving.certPem, key: serving.keyPem, ca: env.cp.caPem, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      seen.push({ path: req.url ?? '', clientCn: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN) });
      if (req.url?.startsWith('/containerLogs/default/web/main') && req.url.includes('follow=true')) {
        // Follow: one line now, one later, then the container "exits".
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('first\n');
        void secondLine.then(() => res.end('second\n'));
      } else if (req.url?.startsWith('/containerLogs/default/web/main')) {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end('line 1\nline 2\n');
      } else {
        res.writeHead(404).end('not found');
      }
    });
    const wss = new WebSocketServer({ noServer: true, handleProtocols: (protocols) => (protocols.has('v5.channel.k8s.io') ? 'v5.channel.k8s.io' : false) });
    agent.on('upgrade', (req, socket, head) => {
      seen.push({ path: req.url ?? '', clientCn: String((socket as TLSSocket).getPeerCertificate().subject?.CN) });
      wss.handleUpgrade(req, socket, head, (ws) => {
        const url = new URL(req.url ?? '/', 'https://agent');
        const command = url.searchParams.getAll('command');
        let stdin = '';
        const finish = (code: number): void => {
          ws.send(Buffer.concat([Buffer.from([1]), Buffer.from(`ran ${command.join(' ')} stdin=${JSON.stringify(stdin)}\n`)]));
          const status = code === 0
            ? { metadata: {}, status: 'Success' }
            : { metadata: {}, status: 'Failure', reason: 'NonZeroExitCode', details: { causes: [{ reason: 'ExitCode', message: String(code) }] } };
          ws.send(Buffer.concat([Buffer.from([3]), Buffer.from(JSON.stringify(status))]));
          ws.close(1000);
        };
        const exit = command[0] === 'false' ? 1 : 0;
        if (url.searchParams.get('stdin') !== 'true') return finish(exit);
        ws.on('message', (data: Buffer) => {
          if (data[0] === 0) stdin += data.subarray(1).toString();
          if (data[0] === 255 && data[1] === 0) finish(exit); // v5: stdin closed
        });
      });
    });
    await new Promise<void>((r) => agent.listen(0, '127.0.0.1', () => r()));
    const port = (agent.address() as AddressInfo).port;
    const node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' }, status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }], daemonEndpoints: { kubeletEndpoint: { Port: port } } } };
    assert.equal((await env.api('POST', '/api/v1/nodes', { body: JSON.stringify(node), contentType: 'application/json' })).status, 201);
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { nodeName: 'node-1', containers: [{ name: 'main', image: 'busybox:1.36' }] } };
    assert.equal((await env.api('POST', '/api/v1/namespaces/default/pods', { body: JSON.stringify(pod), contentType: 'application/json' })).status, 201);
  });
  after(async () => {
    agent?.closeAllConnections();
    await new Promise((r) => (agent ? agent.close(r) : r(undefined)));
    await env?.close();
  });

  it('logs are streamed from the agent with the server client certificate', async () => {
    const k = await env.newKubectl();
    const r = await k(['logs', 'web', '--tail=5']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'line 1\nline 2\n');
    const hit = seen.find((s) => s.path.startsWith('/containerLogs/'));
    assert.equal(hit?.clientCn, 'system:kube-apiserver-kubelet-client');
    assert.match(hit!.path, /tailLines=5/);
  });

  it('logs -f streams as the agent writes', async () => {
    const k = await env.newKubectl();
    const f = k.spawn(['logs', '-f', 'web']);
    await pollUntil('the first line while the agent still streams', () => f.output() === 'first\n', { timeoutMs: 10_000, intervalMs: 25 });
    releaseSecondLine();
    const r = await f.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'first\nsecond\n');
  });

  it('exec runs over WebSocket v5 with stdin and exit codes', async () => {
    const k = await env.newKubectl();
    const ls = await k(['exec', 'web', '--', 'ls', '-l']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(ls.stdout, 'ran ls -l stdin=""\n');
    const cat = await k(['exec', '-i', 'web', '--', 'cat'], { stdin: 'hi\n' });
    assert.equal(cat.code, 0, cat.stderr);
    assert.equal(cat.stdout, 'ran cat stdin="hi\\n"\n');
    const failed = await k(['exec', 'web', '--', 'false']);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /command terminated with exit code 1/);
    assert.ok(seen.some((s) => s.path.startsWith('/exec/default/web/main?') && s.clientCn === 'system:kube-apiserver-kubelet-client'));
  });

  it('exec and logs of an unscheduled pod are a 400 Status', async () => {
    const k = await env.newKubectl();
    assert.equal((await k(['run', 'nowhere', '--image=busybox:1.36'])).code, 0);
    const r = await k(['logs', 'nowhere']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /does not have a host assigned/);
  });
});
