/**
 * Audit events for API requests (kube-apiserver's audit filter; docs/security.md "Audit logging").
 * The server makes one handle per request; the handle decides its level once the user is known
 * and writes one JSON line per stage:
 *
 *   begin ─▶ Audit-ID header
 *     └▶ authenticated(user) ─▶ policy: level None ─▶ nothing more
 *                             └▶ RequestReceived
 *          (body read: requestBody) ─ (long-running, head written: ResponseStarted)
 *          reply written (responseBody) ─▶ response closed ─▶ ResponseComplete
 *          unexpected error ─▶ Panic (instead of ResponseComplete)
 *     └▶ 401 before any user ─▶ one ResponseStarted event with an empty user
 *
 * Bodies: `requestObject` from level Request, `responseObject` from RequestResponse — except for
 * the kinds in {@link SENSITIVE}, whose bodies carry credentials and are never logged whatever the
 * policy says. Headers (and so bearer tokens) are never logged. A failed write is logged and the
 * request goes on (upstream's `blocking` mode ignores backend errors too).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import YAML from 'yaml';
import { decodeProtobufObject } from '@nodelet/api';
import type { Logger } from '@nodelet/base';
import type { UserInfo } from '../auth/types.js';
import { StatusError, toStatusError } from '../status.js';
import { auditUser, microTime, nowMicros, sourceIPsOf, userAgentOf, type AuditEvent, type AuditObjectRef, type AuditResponseStatus } from './event.js';
import { attachAuditSink, type BodySink } from './hooks.js';
import { evaluatePolicy, levelAtLeast, type AuditDecision, type AuditPolicy, type AuditStage } from './policy.js';
import type { AuditRequestInfo } from './request-info.js';

/** Where event lines go: the rotating file, or stdout for `--audit-log-path -`. */
export interface LineWriter {
  write(text: string): void;
  close(): void;
}

/**
 * `group/resource[/subresource]` whose request and response bodies are never logged: Secrets,
 * TokenRequests (`serviceaccounts/token`), TokenReviews (the token is in spec and echoed back),
 * and nodelet's node credentials (the reply is a bearer token).
 */
export const SENSITIVE = new Set(['/secrets', '/serviceaccounts/token', 'authentication.k8s.io/tokenreviews', 'nodelet.io/nodecredentials']);

export function isSensitive(r: AuditRequestInfo['resource']): boolean {
  if (!r) return false;
  const base = `${r.group}/${r.resource}`;
  return SENSITIVE.has(base) || (r.subresource !== undefined && SENSITIVE.has(`${base}/${r.subresource}`));
}

export interface AuditorOptions {
  policy: AuditPolicy;
  writer: LineWriter;
  /** The request's verb and resource (request-info.ts). */
  describe(method: string, url: URL): AuditRequestInfo;
  /** Requests that get a ResponseStarted stage (limits.ts isLongRunning). */
  longRunning(method: string, url: URL): boolean;
  logger: Logger;
}

/** Logs write failures at most this often: a full disk must not flood the server log too. */
const WRITE_ERROR_LOG_INTERVAL_MS = 60_000;

/** One per server; `close()` closes the writer (idempotent). */
export class Auditor {
  readonly #o: AuditorOptions;
  #lastWriteError = 0;
  #closed = false;

  constructor(o: AuditorOptions) {
    this.#o = o;
  }

  /**
   * Starts auditing a request: sets the `Audit-ID` response header (the client's own `Audit-ID`
   * is kept, as upstream does, to correlate a request across servers). `res` is undefined for
   * upgrades, whose head the agent writes.
   */
  begin(req: IncomingMessage, res: ServerResponse | undefined, url: URL): AuditHandle {
    const sent = req.headers['audit-id'];
    const id = typeof sent === 'string' && sent.trim() ? sent.trim() : randomUUID();
    if (res && !res.headersSent) res.setHeader('Audit-ID', id);
    return new AuditHandle(this, this.#o, id, req, res, url);
  }

  /** Writes one event line; never throws. */
  write(ev: AuditEvent): void {
    if (this.#closed) return;
    try {
      this.#o.writer.write(`${JSON.stringify(ev)}\n`);
    } catch (err) {
      const now = Date.now();
      if (now - this.#lastWriteError >= WRITE_ERROR_LOG_INTERVAL_MS) {
        this.#lastWriteError = now;
        this.#o.logger.error({ err, auditID: ev.auditID }, 'Audit event not written');
      }
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#o.writer.close();
  }
}

/** The audit state of one request. Methods may be called in any order and never throw. */
export class AuditHandle implements BodySink {
  readonly id: string;
  readonly #auditor: Auditor;
  readonly #o: AuditorOptions;
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse | undefined;
  readonly #url: URL;
  readonly #received = nowMicros();
  // Read now: once the connection is gone (a ResponseComplete at close) the peer address is too.
  readonly #sourceIPs: string[];
  readonly #userAgent: string | undefined;
  #info: AuditRequestInfo | undefined;
  #user: UserInfo | undefined;
  #impersonated: UserInfo | undefined;
  #decision: AuditDecision | undefined;
  #requestBody: Buffer | undefined;
  /** The decoded request body, once asked for (null: none or undecodable). */
  #requestObject: unknown;
  #responseBody: unknown;
  readonly #annotations: Record<string, string> = {};
  #started = false;
  #done = false;

  constructor(auditor: Auditor, o: AuditorOptions, id: string, req: IncomingMessage, res: ServerResponse | undefined, url: URL) {
    this.id = id;
    this.#auditor = auditor;
    this.#o = o;
    this.#req = req;
    this.#res = res;
    this.#url = url;
    this.#sourceIPs = sourceIPsOf(req);
    this.#userAgent = userAgentOf(req);
    // Attached before authentication: a 401's Status body is in its event too.
    attachAuditSink(req, res, this);
    res?.once('close', () => this.#complete());
  }

  /** The authenticated caller (before impersonation, which is what the policy's users/userGroups match). */
  authenticated(user: UserInfo): void {
    if (this.#decision) return;
    this.#user = user;
    this.#info = this.#o.describe(this.#req.method ?? 'GET', this.#url);
    this.#decision = evaluatePolicy(this.#o.policy, { user, verb: this.#info.verb, resource: this.#info.resource, path: this.#info.path });
    if (this.#decision.level === 'None') return;
    if (this.#res && this.#o.longRunning(this.#req.method ?? 'GET', this.#url)) this.#onHead(this.#res);
    this.#emit('RequestReceived');
  }

  impersonated(user: UserInfo): void {
    this.#impersonated = user;
  }

  requestBody(body: Buffer): void {
    this.#requestBody = body;
    this.#requestObject = undefined;
  }

  responseBody(body: unknown): void {
    this.#responseBody = body;
  }

  annotate(key: string, value: string): void {
    this.#annotations[key] = value;
  }

  /**
   * The handler threw. An error it meant (a StatusError, or one the edge maps to a status) is an
   * ordinary reply; anything else is upstream's panic: a Panic event replaces ResponseComplete.
   */
  failed(err: unknown): void {
    if (err instanceof StatusError || toStatusError(err).reason !== 'InternalError' || this.#done || !this.#active()) return;
    this.#done = true;
    const message = err instanceof Error ? err.message : String(err);
    this.#emit('Panic', { metadata: {}, status: 'Failure', message: `APIServer panic'd: ${message}`, reason: 'InternalError', code: 500 });
  }

  /** An upgrade was handed to the agent: 101 now, ResponseComplete when the connection closes. */
  upgraded(socket: { once(ev: 'close', f: () => void): unknown }): void {
    if (!this.#active()) return;
    this.#emit('ResponseStarted', { metadata: {}, code: 101 });
    socket.once('close', () => this.#complete(101));
  }

  /** An upgrade request answered with an error status (the socket gets a raw Status). */
  upgradeFailed(status: StatusError): void {
    this.#responseBody = status.toBody();
    this.#complete(status.code);
  }

  #active(): boolean {
    return this.#decision !== undefined && this.#decision.level !== 'None';
  }

  #onHead(res: ServerResponse): void {
    // Node writes every head through writeHead (res.write without it calls it too).
    const writeHead = res.writeHead;
    res.writeHead = ((...args: Parameters<typeof writeHead>) => {
      if (!this.#started) {
        this.#started = true;
        this.#emit('ResponseStarted', { metadata: {}, code: typeof args[0] === 'number' ? args[0] : res.statusCode });
      }
      return writeHead.apply(res, args);
    }) as typeof writeHead;
  }

  #complete(code = this.#res?.statusCode ?? 0): void {
    if (this.#done) return;
    this.#done = true;
    if (!this.#decision && code === 401) {
      // Failed authentication: upstream audits it once, with no user, as the response starts.
      this.#info = this.#o.describe(this.#req.method ?? 'GET', this.#url);
      this.#decision = evaluatePolicy(this.#o.policy, { user: { name: '', groups: [] }, verb: this.#info.verb, resource: this.#info.resource, path: this.#info.path });
      if (this.#active()) this.#emit('ResponseStarted', this.#status(code));
      return;
    }
    if (this.#active()) this.#emit('ResponseComplete', this.#status(code));
  }

  #status(code: number): AuditResponseStatus {
    const b = this.#responseBody;
    if (isRecord(b) && b.kind === 'Status') {
      return {
        metadata: {},
        ...(typeof b.status === 'string' ? { status: b.status } : {}),
        ...(typeof b.message === 'string' ? { message: b.message } : {}),
        ...(typeof b.reason === 'string' && b.reason ? { reason: b.reason } : {}),
        ...(isRecord(b.details) ? { details: b.details } : {}),
        code: typeof b.code === 'number' ? b.code : code,
      };
    }
    return { metadata: {}, code };
  }

  #emit(stage: AuditStage, responseStatus?: AuditResponseStatus): void {
    const d = this.#decision!;
    if (d.omitStages.has(stage)) return;
    const info = this.#info!;
    const sensitive = isSensitive(info.resource);
    const requestObject = stage === 'RequestReceived' ? undefined : this.#decodedRequest();
    const objectRef = objectRefOf(info, requestObject);
    const logRequest = !sensitive && requestObject !== undefined && levelAtLeast(d.level, 'Request');
    const responseObject = stage === 'ResponseComplete' && !sensitive && levelAtLeast(d.level, 'RequestResponse') ? this.#decodedResponse() : undefined;
    const ev: AuditEvent = {
      kind: 'Event',
      apiVersion: 'audit.k8s.io/v1',
      level: d.level,
      auditID: this.id,
      stage,
      requestURI: this.#req.url ?? this.#url.pathname,
      verb: info.verb,
      user: this.#user ? auditUser(this.#user) : {},
      ...(this.#impersonated ? { impersonatedUser: auditUser(this.#impersonated) } : {}),
      sourceIPs: this.#sourceIPs,
      ...(this.#userAgent ? { userAgent: this.#userAgent } : {}),
      ...(objectRef ? { objectRef } : {}),
      ...(responseStatus ? { responseStatus } : {}),
      ...(logRequest ? { requestObject: d.omitManagedFields ? withoutManagedFields(requestObject) : requestObject } : {}),
      ...(responseObject !== undefined ? { responseObject: d.omitManagedFields ? withoutManagedFields(responseObject) : responseObject } : {}),
      requestReceivedTimestamp: microTime(this.#received),
      stageTimestamp: microTime(nowMicros()),
      ...(Object.keys(this.#annotations).length > 0 ? { annotations: { ...this.#annotations } } : {}),
    };
    this.#auditor.write(ev);
  }

  /** The request body as an object (by Content-Type), or undefined when absent or undecodable. */
  #decodedRequest(): unknown {
    this.#requestObject ??= this.#decodeRequest() ?? null;
    return this.#requestObject ?? undefined;
  }

  #decodeRequest(): unknown {
    const body = this.#requestBody;
    if (!body || body.length === 0) return undefined;
    const type = String(this.#req.headers['content-type'] ?? 'application/json').split(';')[0]!.trim().toLowerCase();
    try {
      if (type === 'application/vnd.kubernetes.protobuf') return decodeProtobufObject(body).object;
      if (type.endsWith('yaml')) return YAML.parse(body.toString('utf8')) as unknown;
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      // The handler answers 400/415 for it; the event has the status and no requestObject.
      return undefined;
    }
  }

  #decodedResponse(): unknown {
    const b = this.#responseBody;
    if (typeof b !== 'function') return b;
    try {
      return (b as () => unknown)();
    } catch {
      // An encoded reply this decoder does not know (protobuf lists): no responseObject.
      return undefined;
    }
  }
}

function objectRefOf(info: AuditRequestInfo, requestObject: unknown): AuditObjectRef | undefined {
  const r = info.resource;
  if (!r) return undefined;
  // Upstream fills what the URL lacks (a create's name, the uid, the resourceVersion) from the body.
  const meta = isRecord(requestObject) && isRecord(requestObject.metadata) ? requestObject.metadata : {};
  const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);
  const namespace = r.namespace ?? str(meta.namespace);
  const name = r.name ?? str(meta.name);
  const uid = str(meta.uid);
  const resourceVersion = str(meta.resourceVersion);
  return {
    resource: r.resource,
    ...(namespace ? { namespace } : {}),
    ...(name ? { name } : {}),
    ...(uid ? { uid } : {}),
    ...(r.group ? { apiGroup: r.group } : {}),
    apiVersion: r.version,
    ...(resourceVersion ? { resourceVersion } : {}),
    ...(r.subresource ? { subresource: r.subresource } : {}),
  };
}

/** A copy without metadata.managedFields, on the object and on each list item (omitManagedFields). */
function withoutManagedFields(v: unknown): unknown {
  if (!isRecord(v)) return v;
  const strip = (o: Record<string, unknown>): Record<string, unknown> => {
    if (!isRecord(o.metadata) || !('managedFields' in o.metadata)) return o;
    const { managedFields: _m, ...metadata } = o.metadata;
    return { ...o, metadata };
  };
  const out = strip(v);
  return Array.isArray(out.items) ? { ...out, items: out.items.map((i) => (isRecord(i) ? strip(i) : i)) } : out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
