/**
 * The node API (kubelet server/server.go subset), HTTPS on :10250, every request authenticated
 * (authn.ts) and authorized against the node object (authz.ts: SubjectAccessReview):
 *
 *   GET /healthz                                    "ok"
 *   GET /pods                                       PodList of the pods this agent runs
 *   GET /containerLogs/<ns>/<pod>/<container>       ?follow&tailLines&sinceSeconds&sinceTime&timestamps&previous&limitBytes
 *   GET|POST /exec/<ns>/<pod>/<container>?command=…&stdin&stdout&stderr&tty
 *   GET|POST /attach/<ns>/<pod>/<container>?stdin&stdout&stderr&tty
 *                                                   WebSocket (v5…channel.k8s.io): translated to SPDY toward
 *                                                   CRI Exec/Attach (exec-bridge.ts); SPDY/3.1: spliced
 *   GET|POST /portForward/<ns>/<pod>[?port=…]        SPDY/3.1 (portforward.k8s.io) or WebSocket (v4.channel.k8s.io,
 *                                                   needs ?port): spliced to CRI PortForward (upgrade-splice.ts)
 *   GET /metrics                                    Prometheus text
 *   GET /stats/summary, GET /metrics/resource       resource stats (stats-routes.ts)
 *   GET /metrics/cadvisor                            cadvisor's container series (stats-routes.ts)
 *   GET /metrics/probes, GET /configz                 probe counter, effective config (routes)
 *   GET /debug/nodelet/traces/<traceId>             pod journey spans this agent kept (docs/tracing.md)
 *   GET /debug/nodelet/heap[?gc=1]                  heap and RSS, after a full collection with gc>0
 *
 * and the unauthenticated `127.0.0.1:10248/healthz`. The API server reaches /containerLogs, /exec,
 * /attach and /portForward through its pods/log, exec, attach and portforward proxy, so
 * `kubectl logs|exec|attach|cp|port-forward` work.
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
import type { WebSocketServer } from 'ws';
import { AgentError, describeError, hasCode, type Logger } from '@nodelet/base';
import { decodePathSegments, DEFAULT_EDGE_LIMITS, edgeServerOptions, failureStatus, hardenHttpServer, heapReport, parseRequestTarget, queryBool, queryInt, writeRawStatus, type Pod, type Status } from '@nodelet/api/agent';
import { followCriLog, formatCriLogEntry, readCriLog } from '@nodelet/cri-client';
import type { RuntimeService } from '../kubecontainer/cri.js';
import type { NodeApiAuthenticator } from './authn.js';
import type { NodeApiAuthorizer } from './authz.js';
import { waitForDrain } from './drain.js';
import { bridgeRemoteCommand, EXEC_PROTOCOLS } from './exec-bridge.js';
import { checkStreamUpgrade, isStatus } from './upgrade-check.js';
import { spliceUpgrade } from './upgrade-splice.js';
import { serveStats, STATS_PATHS, type StatsSource } from './stats-routes.js';
import type { ServingCert } from './serving-cert.js';
import { isTraceId, type SpanRecord, type TraceSpansResponse } from '@nodelet/api/tracing';

const TRACES_PREFIX = '/debug/nodelet/traces/';
const HEAP_PATH = '/debug/nodelet/heap';

export interface ContainerRef {
  id: string;
  logPath: string;
  running: boolean;
}

export interface NodeApiBackend {
  pods(): Pod[];
  /** The container (newest, or the one before with `previous`) of a pod this agent runs. */
  findContainer(namespace: string, pod: string, container: string, previous: boolean): ContainerRef | undefined;
  /** The ready sandbox of a pod this agent runs (port-forward). */
  findSandbox(namespace: string, pod: string): string | undefined;
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
  /** `/stats/summary` and `/metrics/resource`; 404 without. */
  stats?: StatsSource;
  /** More GET paths answered from memory (`/metrics/probes`, `/configz`), authorized like the rest. */
  routes?: Record<string, () => { contentType: string; body: string }>;
  /** `/debug/nodelet/traces/<traceId>`: the pod journey spans this agent kept (docs/tracing.md); 404 without. */
  traces?: (traceId: string) => SpanRecord[];
  log: Logger;
}

export interface NodeApiServer {
  readonly port: number;
  readonly healthzPort: number;
  /** Serves `cert`/`key` to new TLS connections; open ones keep theirs (certificate rotation). */
  setServingCertificate(cert: string, key: string): void;
  close(): Promise<void>;
}

const MAX_EXEC_FRAME_BYTES = 4 * 1024 * 1024;
const UPGRADABLE = 'only /exec/<namespace>/<pod>/<container>, /attach/<namespace>/<pod>/<container> and /portForward/<namespace>/<pod> can be upgraded';

type StreamTarget = { kind: 'exec' | 'attach'; ns: string; pod: string; container: string } | { kind: 'portForward'; ns: string; pod: string };

function streamTarget([kind, ns, pod, container, ...rest]: string[]): StreamTarget | undefined {
  if (!ns || !pod || rest.length) return undefined;
  if ((kind === 'exec' || kind === 'attach') && container) return { kind, ns, pod, container };
  if (kind === 'portForward' && !container) return { kind, ns, pod };
  return undefined;
}

/** kubelet reads its stream options with the API's parameter codec: `0`/`false` are false, any other value true. */
const flag = (q: URLSearchParams, name: string): boolean => queryBool(q, name);

/** `port` (kubelet's name) or `ports` (PodPortForwardOptions'), repeated or comma-separated. */
function parsePorts(q: URLSearchParams): number[] {
  const raw = [...q.getAll('port'), ...q.getAll('ports')].flatMap((v) => v.split(','));
  return raw.map((p) => {
    const n = Number(p);
    if (!/^\d+$/.test(p) || n < 1 || n > 65535) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid port "${p}": must be 1-65535`);
    return n;
  });
}

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

/** Log lines are sent in chunks of up to about this many characters (see serveLogs). */
const LOG_BATCH_BYTES = 64 * 1024;

async function serveLogs(o: NodeApiOptions, url: URL, res: http.ServerResponse, req: http.IncomingMessage): Promise<void> {
  const [, ns, pod, container] = parts(url.pathname);
  if (!ns || !pod || !container) return send(res, 400, 'expected /containerLogs/<namespace>/<pod>/<container>\n');
  const q = url.searchParams;
  const previous = queryBool(q, 'previous');
  const ref = o.backend.findContainer(ns, pod, container, previous);
  if (!ref) return send(res, 404, `container "${container}" in pod "${ns}/${pod}" not found${previous ? ' (no previous instance)' : ''}\n`);
  // The API server's PodLogOptions validation, repeated for direct callers: a bad value is a 400.
  const intParam = (name: string, min: number): number | undefined => {
    const n = queryInt(q, name);
    if (n !== undefined && n < min) throw new AgentError('ERR_INVALID_ARGUMENT', `${name}: must be an integer of at least ${min}, got ${JSON.stringify(q.get(name))}`);
    return n;
  };
  const tail = intParam('tailLines', 0);
  const sinceSeconds = intParam('sinceSeconds', 1);
  const limit = intParam('limitBytes', 1) ?? Infinity;
  const sinceTime = q.has('sinceTime') ? new Date(q.get('sinceTime')!) : undefined;
  if (sinceTime && Number.isNaN(sinceTime.getTime())) throw new AgentError('ERR_INVALID_ARGUMENT', `sinceTime: must be an RFC 3339 time, got ${JSON.stringify(q.get('sinceTime'))}`);
  if (sinceTime && sinceSeconds !== undefined) throw new AgentError('ERR_INVALID_ARGUMENT', 'at most one of sinceTime or sinceSeconds may be specified');
  const since = sinceSeconds !== undefined ? new Date(Date.now() - sinceSeconds * 1000) : sinceTime;
  const timestamps = queryBool(q, 'timestamps');
  const follow = queryBool(q, 'follow') && ref.running;
  const ac = new AbortController();
  req.on('close', () => ac.abort());
  // 200 once the log file is open: a file that cannot be opened is an error status with the reason
  // (kubelet answers 400 with it), not an empty log.
  const answer = (): void => {
    if (res.headersSent) return;
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.flushHeaders();
  };
  let written = 0;
  const opts = { tail, since, signal: ac.signal, opened: answer };
  const entries = follow
    ? followCriLog(ref.logPath, { ...opts, isFinished: async () => !(await o.backend.isRunning(ref.id)) })
    : readCriLog(ref.logPath, opts);
  // The lines of one read leave as one chunk, not one chunk (TLS record, API server proxy hop)
  // per line, which made `kubectl logs -f` of a chatty container fall ever further behind.
  // The batch goes when the reader waits (for the disk or the file to grow: the next tick) or
  // at LOG_BATCH_BYTES; a full socket stops the reading until it drains.
  let batch = '';
  let scheduled = false;
  const flushBatch = (): void => {
    if (batch) res.write(batch);
    batch = '';
  };
  try {
    for await (const e of entries) {
      const line = formatCriLogEntry(e, { timestamps });
      if (written + Buffer.byteLength(line) > limit) {
        flushBatch();
        res.write(Buffer.from(line).subarray(0, limit - written));
        break;
      }
      written += Buffer.byteLength(line);
      batch += line;
      if (batch.length >= LOG_BATCH_BYTES || res.writableNeedDrain) {
        flushBatch();
        await waitForDrain(res, ac.signal);
      } else if (!scheduled) {
        scheduled = true;
        process.nextTick(() => {
          scheduled = false;
          flushBatch();
        });
      }
    }
  } catch (err) {
    if (!res.headersSent && !ac.signal.aborted) return send(res, 400, `${describeError(err)}\n`);
    if (!ac.signal.aborted && (err as NodeJS.ErrnoException).code !== 'ENOENT') o.log.warn({ err: describeError(err) }, 'Container log read failed');
  }
  answer();
  flushBatch();
  res.end();
}

export async function startNodeApi(o: NodeApiOptions): Promise<NodeApiServer> {
  const ca = o.clientCAFile ? await readFile(o.clientCAFile, 'utf8') : undefined;
  // `ws` is loaded with the first WebSocket exec/attach: most nodes never see one, and it would
  // cost every agent ~1 MiB of heap (docs/performance.md, "Agent footprint").
  let wss: Promise<WebSocketServer> | undefined;
  const webSockets = (): Promise<WebSocketServer> => (wss ??= import('ws').then(({ WebSocketServer }) => {
    const w = new WebSocketServer({
      noServer: true,
      // stdin frames are small (kubectl sends at most 32 KiB); ws would accept 100 MiB.
      maxPayload: MAX_EXEC_FRAME_BYTES,
      handleProtocols: (offered) => EXEC_PROTOCOLS.find((p) => offered.has(p)) ?? false,
    });
    // Whatever `ws` still refuses after checkExecUpgrade gets a Status too.
    w.on('wsClientError', (err: Error, socket: Duplex) => writeRawStatus(socket, failureStatus(400, 'BadRequest', err.message)));
    return w;
  }));
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
    if (o.stats && STATS_PATHS.has(url.pathname)) return serveStats(url, o.stats, res, o.log);
    const route = o.routes && Object.hasOwn(o.routes, url.pathname) ? o.routes[url.pathname] : undefined;
    if (route) {
      const r = route();
      return send(res, 200, r.body, r.contentType);
    }
    if (url.pathname === '/metrics') {
      const m = await o.backend.metrics();
      return send(res, 200, m.body, m.contentType);
    }
    if (url.pathname.startsWith('/containerLogs/')) return serveLogs(o, url, res, req);
    if (o.traces && url.pathname.startsWith(TRACES_PREFIX)) {
      const traceId = url.pathname.slice(TRACES_PREFIX.length);
      if (!isTraceId(traceId)) return send(res, 400, 'not a trace id (32 lower-case hex digits)\n');
      return send(res, 200, JSON.stringify({ traceId, spans: o.traces(traceId) } satisfies TraceSpansResponse), 'application/json');
    }
    if (url.pathname === HEAP_PATH) {
      const gc = queryInt(url.searchParams, 'gc') ?? 0;
      return send(res, 200, JSON.stringify(await heapReport(gc > 0)), 'application/json');
    }
    if (/^\/(exec|attach|portForward)\//.test(url.pathname)) return send(res, 400, 'streams need an upgrade: SPDY/3.1 or a WebSocket (v5.channel.k8s.io)\n');
    return send(res, 404, 'not found\n');
  };
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
    const target = streamTarget(parts(url.pathname));
    if (!target) return writeRawStatus(socket, failureStatus(404, 'NotFound', UPGRADABLE));
    const up = checkStreamUpgrade(req, target.kind);
    if (isStatus(up)) return writeRawStatus(socket, up);
    const q = url.searchParams;
    if (target.kind === 'portForward') {
      const podSandboxId = o.backend.findSandbox(target.ns, target.pod);
      if (!podSandboxId) return writeRawStatus(socket, failureStatus(404, 'NotFound', `pod "${target.ns}/${target.pod}" has no ready sandbox on this node`));
      const ports = parsePorts(q);
      if (up.type === 'websocket' && ports.length === 0) return writeRawStatus(socket, failureStatus(400, 'BadRequest', 'query parameter "port" is required'));
      const res = await o.backend.runtime.portForward({ podSandboxId, port: ports });
      return spliceUpgrade({ req, socket, head, url: res.url });
    }
    const ref = o.backend.findContainer(target.ns, target.pod, target.container, false);
    if (!ref || !ref.running) return writeRawStatus(socket, failureStatus(404, 'NotFound', `container "${target.container}" in pod "${target.ns}/${target.pod}" is not running`));
    // Absent means false, as kubelet reads them: a SPDY client opens exactly the streams it asked
    // for, and the runtime waits for every stream the CRI request names.
    const tty = flag(q, 'tty');
    const flags = {
      stdin: flag(q, 'stdin') || flag(q, 'input'),
      stdout: flag(q, 'stdout') || flag(q, 'output'),
      stderr: !tty && (flag(q, 'stderr') || flag(q, 'error')),
      tty,
    };
    const cmd = q.getAll('command');
    if (target.kind === 'exec' && cmd.length === 0) return writeRawStatus(socket, failureStatus(400, 'BadRequest', 'exec: no command given (use ?command=\u2026)'));
    const start = async (): Promise<string> => {
      const res = target.kind === 'exec' ? await o.backend.runtime.exec({ containerId: ref.id, cmd, ...flags }) : await o.backend.runtime.attach({ containerId: ref.id, ...flags });
      return res.url;
    };
    // SPDY to SPDY is a splice; a WebSocket is translated (exec-bridge.ts).
    if (up.type === 'spdy') return spliceUpgrade({ req, socket, head, url: await start() });
    (await webSockets()).handleUpgrade(req, socket, head, (ws) => {
      bridgeRemoteCommand({ client: ws, socket, start, flags, log: o.log }).catch((err: unknown) => {
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
    setServingCertificate(cert, key) {
      server.setSecureContext({ cert, key, ...(ca ? { ca } : {}) });
    },
    close() {
      closed ??= (async () => {
        const w = await wss?.catch(() => undefined); // the WebSocket server never started: nothing of it to close
        for (const c of w?.clients ?? []) c.terminate();
        w?.close();
        server.closeAllConnections();
        healthz.closeAllConnections();
        await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => healthz.close(r))]);
      })();
      return closed;
    },
  };
}
