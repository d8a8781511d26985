/**
 * The node API (kubelet server/server.go subset), HTTPS on :10250, every request authenticated
 * (authn.ts) and authorized against the node object (authz.ts: SubjectAccessReview):
 *
 *   GET /healthz                                    "ok"
 *   GET /pods                                       PodList of the pods this agent runs
 *   GET /containerLogs/<ns>/<pod>/<container>       ?follow&tailLines&sinceSeconds&sinceTime&timestamps&previous&limitBytes
 *   GET /exec/<ns>/<pod>/<container>?command=…      WebSocket (v5/v4.channel.k8s.io), bridged to CRI Exec
 *   GET /metrics                                    Prometheus text
 *
 * and the unauthenticated `127.0.0.1:10248/healthz`. The API server reaches /containerLogs and
 * /exec through its pods/log and pods/exec proxy, so `kubectl logs|exec` work.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { WebSocketServer } from 'ws';
import { describeError, type Logger } from '@nodelet/base';
import type { Pod } from '@nodelet/api';
import { followCriLog, formatCriLogEntry, readCriLog } from '@nodelet/cri-client';
import type { RuntimeService } from '../runtime/cri.js';
import type { NodeApiAuthenticator } from './authn.js';
import type { NodeApiAuthorizer } from './authz.js';
import { bridgeExec, EXEC_PROTOCOLS } from './exec-bridge.js';
import type { ServingCert } from './serving-cert.js';

export interface ContainerRef {
  id: string;
  logPath: string;
  running: boolean;
}

export interface NodeApiBackend {
  pods(): Pod[];
  /** The container (newest, or the one before with `previous`) of a pod this agent runs. */
  findContainer(namespace: string, pod: string, container: string, previous: boolean): ContainerRef | undefined;
  isRunning(containerId: string): Promise<boolean>;
  runtime: RuntimeService;
  metrics(): Promise<{ contentType: string; body: string }>;
  healthy(): boolean;
}

export interface NodeApiOptions {
  address: string;
  port: number;
  healthzAddress: string;
  healthzPort: number;
  cert: ServingCert;
  clientCAFile?: string;
  authn: NodeApiAuthenticator;
  authz: NodeApiAuthorizer;
  backend: NodeApiBackend;
  log: Logger;
}

export interface NodeApiServer {
  readonly port: number;
  readonly healthzPort: number;
  /** Serves `cert`/`key` to new TLS connections; open ones keep theirs (certificate rotation). */
  setServingCertificate(cert: string, key: string): void;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, code: number, body: string, type = 'text/plain; charset=utf-8'): void {
  if (res.headersSent) return void res.end();
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function parts(pathname: string): string[] {
  return pathname.split('/').filter(Boolean).map(decodeURIComponent);
}

async function serveLogs(o: NodeApiOptions, url: URL, res: http.ServerResponse, req: http.IncomingMessage): Promise<void> {
  const [, ns, pod, container] = parts(url.pathname);
  if (!ns || !pod || !container) return send(res, 400, 'expected /containerLogs/<namespace>/<pod>/<container>\n');
  const q = url.searchParams;
  const previous = q.get('previous') === 'true';
  const ref = o.backend.findContainer(ns, pod, container, previous);
  if (!ref) return send(res, 404, `container "${container}" in pod "${ns}/${pod}" not found${previous ? ' (no previous instance)' : ''}\n`);
  const tail = q.has('tailLines') ? Number(q.get('tailLines')) : undefined;
  const since = q.has('sinceSeconds') ? new Date(Date.now() - Number(q.get('sinceSeconds')) * 1000) : q.has('sinceTime') ? new Date(q.get('sinceTime')!) : undefined;
  const timestamps = q.get('timestamps') === 'true';
  const limit = q.has('limitBytes') ? Number(q.get('limitBytes')) : Infinity;
  const follow = q.get('follow') === 'true' && ref.running;
  const ac = new AbortController();
  req.on('close', () => ac.abort());
  res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.flushHeaders();
  let written = 0;
  const opts = { tail, since, signal: ac.signal };
  const entries = follow
    ? followCriLog(ref.logPath, { ...opts, isFinished: async () => !(await o.backend.isRunning(ref.id)) })
    : readCriLog(ref.logPath, opts);
  try {
    for await (const e of entries) {
      const line = formatCriLogEntry(e, { timestamps });
      if (written + Buffer.byteLength(line) > limit) {
        res.write(Buffer.from(line).subarray(0, limit - written));
        break;
      }
      written += Buffer.byteLength(line);
      if (!res.write(line)) await new Promise((r) => res.once('drain', r));
    }
  } catch (err) {
    if (!ac.signal.aborted && (err as NodeJS.ErrnoException).code !== 'ENOENT') o.log.warn({ err: describeError(err) }, 'Container log read failed');
  }
  res.end();
}

export async function startNodeApi(o: NodeApiOptions): Promise<NodeApiServer> {
  const ca = o.clientCAFile ? await readFile(o.clientCAFile, 'utf8') : undefined;
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => EXEC_PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'https://node');
    const auth = await o.authn.authenticate(req);
    if (!auth.ok) return send(res, 401, `Unauthorized: ${auth.reason}\n`);
    const decision = await o.authz.authorize(auth.user ?? '', auth.groups ?? [], req.method ?? 'GET', url.pathname);
    if (!decision.allowed) return send(res, 403, `${decision.message}\n`);
    if (req.method !== 'GET') return send(res, 405, 'method not allowed\n');
    if (url.pathname === '/healthz') return send(res, o.backend.healthy() ? 200 : 500, o.backend.healthy() ? 'ok' : 'unhealthy');
    if (url.pathname === '/pods' || url.pathname === '/pods/') {
      return send(res, 200, JSON.stringify({ kind: 'PodList', apiVersion: 'v1', metadata: {}, items: o.backend.pods() }), 'application/json');
    }
    if (url.pathname === '/metrics') {
      const m = await o.backend.metrics();
      return send(res, 200, m.body, m.contentType);
    }
    if (url.pathname.startsWith('/containerLogs/')) return serveLogs(o, url, res, req);
    if (url.pathname.startsWith('/exec/')) return send(res, 400, 'exec needs a WebSocket upgrade (v5.channel.k8s.io or v4.channel.k8s.io)\n');
    return send(res, 404, 'not found\n');
  };
  const server = https.createServer({ cert: o.cert.cert, key: o.cert.key, ...(ca ? { ca, requestCert: true, rejectUnauthorized: false } : {}) }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      o.log.warn({ err: describeError(err), path: req.url?.split('?')[0] }, 'Node API request failed');
      send(res, 500, `${describeError(err)}\n`);
    });
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'https://node');
      const auth = await o.authn.authenticate(req);
      if (!auth.ok) {
        socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n');
        return;
      }
      const decision = await o.authz.authorize(auth.user ?? '', auth.groups ?? [], req.method ?? 'GET', url.pathname);
      if (!decision.allowed) {
        const body = `${decision.message}\n`;
        socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
        return;
      }
      const [kind, ns, pod, container] = parts(url.pathname);
      const ref = kind === 'exec' && ns && pod && container ? o.backend.findContainer(ns, pod, container, false) : undefined;
      if (!ref || !ref.running) {
        socket.end(`HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n`);
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        bridgeExec({ client: ws, runtime: o.backend.runtime, containerId: ref.id, query: url.searchParams, log: o.log }).catch((err: unknown) => {
          o.log.warn({ err: describeError(err) }, 'Exec bridge failed');
        });
      });
    })();
  });
  const healthz = http.createServer((req, res) => {
    if (req.url === '/healthz') return send(res, o.backend.healthy() ? 200 : 500, o.backend.healthy() ? 'ok' : 'unhealthy');
    send(res, 404, 'not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.address, () => resolve());
  });
  await new Promise<void>((resolve, reject) => {
    healthz.once('error', reject);
    healthz.listen(o.healthzPort, o.healthzAddress, () => resolve());
  });
  let closed: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    healthzPort: (healthz.address() as AddressInfo).port,
    setServingCertificate(cert, key) {
      server.setSecureContext({ cert, key, ...(ca ? { ca } : {}) });
    },
    close() {
      closed ??= (async () => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        healthz.closeAllConnections();
        await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => healthz.close(r))]);
      })();
      return closed;
    },
  };
}
