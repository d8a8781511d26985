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
 *
 * Normal errors are text (as kubelet's); a malformed request — an unparsable target, bad
 * percent-encoding, a bad WebSocket handshake, anything the HTTP parser rejects — gets a 4xx
 * Kubernetes `Status`, and nothing a client sends may take the process down.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { WebSocketServer } from 'ws';
import { AgentError, describeError, hasCode, type Logger } from '@nodelet/base';
import { decodePathSegments, DEFAULT_EDGE_LIMITS, edgeServerOptions, failureStatus, hardenHttpServer, parseRequestTarget, writeRawStatus, type Pod, type Status } from '@nodelet/api';
import { followCriLog, formatCriLogEntry, readCriLog } from '@nodelet/cri-client';
import type { RuntimeService } from '../runtime/cri.js';
import type { NodeApiAuthenticator } from './authn.js';
import type { NodeApiAuthorizer } from './authz.js';
import { waitForDrain } from './drain.js';
import { bridgeExec, EXEC_PROTOCOLS } from './exec-bridge.js';
import { checkExecUpgrade } from './upgrade-check.js';
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
  close(): Promise<void>;
}

const MAX_EXEC_FRAME_BYTES = 4 * 1024 * 1024;

function send(res: http.ServerResponse, code: number, body: string, type = 'text/plain; charset=utf-8'): void {
  if (res.headersSent) return void res.end();
  res.writeHead(code, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** A request the node API cannot even route (ERR_INVALID_ARGUMENT): answered 400 with a Status. */
const badRequest = (err: unknown): Status => failureStatus(400, 'BadRequest', (err as Error).message);

function parseTarget(req: http.IncomingMessage): URL {
  const url = parseRequestTarget(req.url);
  if (!url) throw new AgentError('ERR_INVALID_ARGUMENT', 'malformed request target');
  return url;
}

function parts(pathname: string): string[] {
  const segs = decodePathSegments(pathname);
  if (!segs) throw new AgentError('ERR_INVALID_ARGUMENT', 'malformed percent-encoding in path');
  return segs;
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
      if (!res.write(line)) await waitForDrain(res, ac.signal);
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
    // stdin frames are small (kubectl sends at most 32 KiB); ws would accept 100 MiB.
    maxPayload: MAX_EXEC_FRAME_BYTES,
    handleProtocols: (offered) => EXEC_PROTOCOLS.find((p) => offered.has(p)) ?? false,
  });
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    const url = parseTarget(req);
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
  // Whatever `ws` still refuses after checkExecUpgrade gets a Status too.
  wss.on('wsClientError', (err: Error, socket: Duplex) => writeRawStatus(socket, failureStatus(400, 'BadRequest', err.message)));
  const server = https.createServer(
    { cert: o.cert.cert, key: o.cert.key, ...(ca ? { ca, requestCert: true, rejectUnauthorized: false } : {}), ...edgeServerOptions(DEFAULT_EDGE_LIMITS) },
    (req, res) => {
      res.on('error', () => undefined); // a client that went away; nothing left to tell it
      handle(req, res).catch((err: unknown) => {
        if (hasCode(err, 'ERR_INVALID_ARGUMENT')) return send(res, 400, JSON.stringify(badRequest(err)), 'application/json');
        o.log.warn({ err: describeError(err), path: req.url?.split('?')[0] }, 'Node API request failed');
        if (res.headersSent) res.destroy();
        else send(res, 500, `${describeError(err)}\n`);
      });
    },
  );
  hardenHttpServer(server);
  const upgrade = async (req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    const url = parseTarget(req);
    const auth = await o.authn.authenticate(req);
    if (!auth.ok) return writeRawStatus(socket, failureStatus(401, 'Unauthorized', `Unauthorized: ${auth.reason ?? 'no credentials'}`));
    const decision = await o.authz.authorize(auth.user ?? '', auth.groups ?? [], req.method ?? 'GET', url.pathname);
    if (!decision.allowed) {
      // kubelet's plain-text denial, as on the non-upgrade path.
      const body = `${decision.message}\n`;
      socket.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    const [kind, ns, pod, container] = parts(url.pathname);
    if (kind !== 'exec' || !ns || !pod || !container) return writeRawStatus(socket, failureStatus(404, 'NotFound', 'only /exec/<namespace>/<pod>/<container> can be upgraded'));
    const bad = checkExecUpgrade(req);
    if (bad) return writeRawStatus(socket, bad);
    const ref = o.backend.findContainer(ns, pod, container, false);
    if (!ref || !ref.running) return writeRawStatus(socket, failureStatus(404, 'NotFound', `container "${container}" in pod "${ns}/${pod}" is not running`));
    wss.handleUpgrade(req, socket, head, (ws) => {
      bridgeExec({ client: ws, runtime: o.backend.runtime, containerId: ref.id, query: url.searchParams, log: o.log }).catch((err: unknown) => {
        o.log.warn({ err: describeError(err) }, 'Exec bridge failed');
      });
    });
  };
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // Node drops its own error listener from an upgraded socket: a reset while we authenticate
    // would otherwise be an uncaught 'error' event.
    socket.on('error', () => socket.destroy());
    upgrade(req, socket, head).catch((err: unknown) => {
      if (hasCode(err, 'ERR_INVALID_ARGUMENT')) return writeRawStatus(socket, badRequest(err));
      o.log.warn({ err: describeError(err), path: req.url?.split('?')[0] }, 'Node API upgrade failed');
      writeRawStatus(socket, failureStatus(500, 'InternalError', describeError(err)));
    });
  });
  const healthz = http.createServer(edgeServerOptions(DEFAULT_EDGE_LIMITS), (req, res) => {
    if (req.url === '/healthz') return send(res, o.backend.healthy() ? 200 : 500, o.backend.healthy() ? 'ok' : 'unhealthy');
    send(res, 404, 'not found\n');
  });
  hardenHttpServer(healthz);
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
