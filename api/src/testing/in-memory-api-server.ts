/**
 * InMemoryApiServer: a small, real HTTP server (loopback, port 0) that speaks enough of the
 * Kubernetes REST API for unit tests of clients, informers, the agent and controllers:
 * get/list (selectors, limit/continue)/watch (from RV, initial ADDED, selector enter/leave,
 * bookmarks, 410 after compact)/create/update (+status)/patch (merge, json, strategic≈merge,
 * apply≈merge)/delete (graceful pods, finalizers), pods/binding, pods/eviction, pods/log and
 * the `/scale` of deployments and replicasets.
 * Tests can drop watches, expire them, inject failures and read the request log.
 *
 * Not a conformance reference: the real server is control-plane/src/apiserver.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject, Status } from '../types/meta.js';
import { apiVersionOf, RESOURCES, type ResourceType } from '../types/resources.js';
import { fieldValue, matchFields, matchLabels, parseFieldSelector, parseLabelSelector } from '../selectors.js';
import { ApiClient, type ApiClientOptions } from '../client/api-client.js';
import { MemoryStore, StatusFailure } from './memory-store.js';
import { WatchHub } from './watch-hub.js';
import jsonpatch from 'fast-json-patch';
import { mergePatch } from '../merge-patch.js';
import { queryBool } from '../serving/query-params.js';
import { toScale, withScale } from './scale.js';
import type { Scale } from '../types/apps.js';

export interface InMemoryApiServerOptions {
  /** Resources to serve (default: all of RESOURCES). */
  resources?: readonly ResourceType[];
  /** When set, requests must carry `Authorization: Bearer <token>` (else 401). */
  token?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Route {
  r: ResourceType;
  namespace?: string;
  name?: string;
  subresource?: string;
}

interface Failure {
  method?: string;
  path?: string | RegExp;
  status: Status;
  remaining: number;
}

/** The patch media types kube-apiserver accepts, in the order its 415 lists them. */
const PATCH_TYPES: readonly string[] = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml', 'application/strategic-merge-patch+json'];

export class InMemoryApiServer {
  readonly store = new MemoryStore();
  readonly requests: RecordedRequest[] = [];
  readonly #server: http.Server;
  readonly #resources: readonly ResourceType[];
  readonly #token: string | undefined;
  readonly #watches: WatchHub;
  readonly #failures: Failure[] = [];
  readonly #clients: ApiClient[] = [];
  readonly #logs = new Map<string, string>();
  #url = '';

  private constructor(o: InMemoryApiServerOptions) {
    this.#resources = o.resources ?? RESOURCES;
    this.#token = o.token;
    this.#server = http.createServer((req, res) => void this.#handle(req, res));
    this.#watches = new WatchHub(this.store);
  }

  static async start(o: InMemoryApiServerOptions = {}): Promise<InMemoryApiServer> {
    const s = new InMemoryApiServer(o);
    await new Promise<void>((resolve, reject) => {
      s.#server.once('error', reject);
      s.#server.listen(0, '127.0.0.1', () => resolve());
    });
    s.#url = `http://127.0.0.1:${(s.#server.address() as AddressInfo).port}`;
    return s;
  }

  get url(): string {
    return this.#url;
  }

  /** Number of open watch connections. */
  get watchCount(): number {
    return this.#watches.size;
  }

  /** An ApiClient for this server, closed with the server. */
  client(o: Partial<ApiClientOptions> = {}): ApiClient {
    const c = new ApiClient({ server: this.#url, token: this.#token, timeoutMs: 5_000, ...o });
    this.#clients.push(c);
    return c;
  }

  /** Inserts an object directly (no HTTP), returning it with uid and resourceVersion. */
  seed<T extends KubeObject>(r: ResourceType<T>, obj: T): T {
    return this.store.create(r, obj) as T;
  }

  /** Sets what `GET pods/<name>/log` returns. */
  setPodLog(namespace: string, name: string, text: string): void {
    this.#logs.set(`${namespace}/${name}`, text);
  }

  /** Makes the next `times` matching requests fail with `status` (e.g. 500, 429). */
  failNext(match: { method?: string; path?: string | RegExp }, status: Partial<Status> & { code: number }, times = 1): void {
    this.#failures.push({ ...match, remaining: times, status: { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'InternalError', message: 'injected failure', ...status } });
  }

  /** Drops every failure `failNext` still holds (the server is back). */
  clearFailures(): void {
    this.#failures.length = 0;
  }

  /** Cuts every open watch connection without a final event (a dropped connection). */
  dropWatches(): void {
    this.#watches.drop();
  }

  /** Sends `ERROR 410 Expired` to every watch and ends it, as the cacher does after compaction. */
  expireWatches(): void {
    this.#watches.expire();
  }

  /** Sends a BOOKMARK at the current revision to watches that asked for bookmarks. */
  sendBookmarks(): void {
    this.#watches.bookmark();
  }

  async close(): Promise<void> {
    for (const c of this.#clients) c.close();
    this.dropWatches();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const method = req.method ?? 'GET';
    this.requests.push({ method, path: url.pathname, query: url.searchParams, headers: req.headers, body });
    try {
      if (this.#token !== undefined && req.headers.authorization !== `Bearer ${this.#token}`) {
        throw new StatusFailure(401, 'Unauthorized', 'Unauthorized');
      }
      const injected = this.#takeFailure(method, url.pathname);
      if (injected) return sendJson(res, injected.code ?? 500, injected);
      if (url.pathname === '/version') return sendJson(res, 200, { major: '1', minor: '32', gitVersion: 'v1.32.0-nodelet-test' });
      const route = this.#route(url.pathname);
      if (!route) throw new StatusFailure(404, 'NotFound', 'the server could not find the requested resource');
      await this.#serve(method, route, url.searchParams, body, req, res);
    } catch (err) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const f = err instanceof StatusFailure ? err : new StatusFailure(500, 'InternalError', err instanceof Error ? err.message : String(err));
      sendJson(res, f.code, f.toStatus());
    }
  }

  #takeFailure(method: string, path: string): Status | undefined {
    const i = this.#failures.findIndex(
      (f) => (!f.method || f.method === method) && (!f.path || (typeof f.path === 'string' ? f.path === path : f.path.test(path))),
    );
    if (i < 0) return undefined;
    const f = this.#failures[i] as Failure;
    if (--f.remaining <= 0) this.#failures.splice(i, 1);
    return f.status;
  }

  #route(path: string): Route | undefined {
    const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
    let group: string;
    let rest: string[];
    if (parts[0] === 'api' && parts[1] === 'v1') {
      group = '';
      rest = parts.slice(2);
    } else if (parts[0] === 'apis' && parts.length >= 3) {
      group = parts[1] ?? '';
      rest = parts.slice(3);
    } else return undefined;
    const find = (plural: string | undefined): ResourceType | undefined => this.#resources.find((r) => r.group === group && r.plural === plural);
    let namespace: string | undefined;
    if (rest[0] === 'namespaces' && rest.length >= 3 && find(rest[2])?.namespaced) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const r = find(rest[0]);
    if (!r || rest.length > 3) return undefined;
    return { r, namespace, name: rest[1], subresource: rest[2] };
  }

  async #serve(method: string, rt: Route, q: URLSearchParams, body: string, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const { r, namespace, name, subresource } = rt;
    const parse = (): KubeObject & Record<string, unknown> => {
      try {
        return JSON.parse(body) as KubeObject & Record<string, unknown>;
      } catch {
        throw new StatusFailure(400, 'BadRequest', 'the request body is not valid JSON');
      }
    };
    if (name === undefined) {
      if (method === 'GET' && queryBool(q, 'watch')) {
        return this.#watches.serve({
          r,
          namespace,
          matches: this.#matcher(q),
          resourceVersion: q.get('resourceVersion') ?? '',
          allowWatchBookmarks: queryBool(q, 'allowWatchBookmarks'),
          timeoutSeconds: Number(q.get('timeoutSeconds') ?? 0),
        }, res);
      }
      if (method === 'GET') return sendJson(res, 200, this.#list(r, namespace, q));
      if (method === 'POST') {
        const obj = parse();
        obj.metadata ??= {};
        if (r.namespaced) {
          if (namespace === undefined) throw new StatusFailure(405, 'MethodNotAllowed', 'create needs a namespace in the path');
          if (obj.metadata.namespace && obj.metadata.namespace !== namespace) {
            throw new StatusFailure(400, 'BadRequest', 'the namespace of the provided object does not match the namespace sent on the request');
          }
          obj.metadata.namespace = namespace;
        }
        return sendJson(res, 201, this.store.create(r, obj));
      }
      throw new StatusFailure(405, 'MethodNotAllowed', `${method} is not supported on a collection`);
    }
    if (subresource !== undefined && !(r.subresources ?? []).includes(subresource)) {
      throw new StatusFailure(404, 'NotFound', `the server could not find the requested resource (${r.plural}/${subresource})`);
    }
    if (method === 'GET' && subresource === 'log') {
      this.store.mustGet(r, namespace, name);
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(this.#logs.get(`${namespace}/${name}`) ?? '');
      return;
    }
    if (subresource === 'scale') return this.#scale(method, r, namespace, name, req.headers['content-type'] ?? '', body, res);
    if (method === 'GET') return sendJson(res, 200, this.store.mustGet(r, namespace, name));
    if (method === 'POST' && subresource === 'binding') return sendJson(res, 201, this.#bind(r, namespace, name, parse()));
    if (method === 'POST' && subresource === 'eviction') {
      this.#delete(r, namespace, name, {});
      return sendJson(res, 201, success(r, name));
    }
    if (method === 'PUT') {
      const obj = parse();
      obj.metadata ??= {};
      if (obj.metadata.name !== name) throw new StatusFailure(400, 'BadRequest', 'the name of the object does not match the name on the URL');
      if (r.namespaced) obj.metadata.namespace = namespace;
      return sendJson(res, 200, this.store.update(r, obj, { subresource }));
    }
    if (method === 'PATCH') return sendJson(res, 200, this.#patch(r, namespace, name, subresource, req.headers['content-type'] ?? '', body));
    if (method === 'DELETE') {
      const opts = body ? (parse() as { gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string } }) : {};
      const out = this.#delete(r, namespace, name, opts);
      return sendJson(res, 200, out ?? success(r, name));
    }
    throw new StatusFailure(405, 'MethodNotAllowed', `${method} is not supported`);
  }

  #scale(method: string, r: ResourceType, ns: string | undefined, name: string, contentType: string, body: string, res: http.ServerResponse): void {
    const cur = this.store.mustGet(r, ns, name);
    if (method === 'GET') return sendJson(res, 200, toScale(cur));
    let scale: Scale;
    try {
      const input = JSON.parse(body) as unknown;
      if (method === 'PUT') scale = input as Scale;
      else if (method === 'PATCH' && contentType.startsWith('application/json-patch+json')) scale = applyJsonPatch(toScale(cur), input) as Scale;
      else if (method === 'PATCH') scale = mergePatch(toScale(cur), input) as Scale;
      else throw new StatusFailure(405, 'MethodNotAllowed', `${method} is not supported on scale`);
    } catch (err) {
      if (err instanceof StatusFailure) throw err;
      throw new StatusFailure(400, 'BadRequest', err instanceof Error ? err.message : String(err));
    }
    sendJson(res, 200, toScale(this.store.update(r, withScale(cur, scale))));
  }

  #list(r: ResourceType, namespace: string | undefined, q: URLSearchParams): object {
    const match = this.#matcher(q);
    const all = this.store.list(r, namespace).filter(match);
    const limit = Number(q.get('limit') ?? 0);
    const token = q.get('continue');
    const offset = token ? (JSON.parse(Buffer.from(token, 'base64url').toString()) as { offset: number }).offset : 0;
    const items = limit > 0 ? all.slice(offset, offset + limit) : all.slice(offset);
    const next = limit > 0 && offset + limit < all.length ? Buffer.from(JSON.stringify({ offset: offset + limit })).toString('base64url') : undefined;
    const metadata: Record<string, unknown> = { resourceVersion: String(this.store.revision) };
    if (next) {
      metadata.continue = next;
      metadata.remainingItemCount = all.length - offset - limit;
    }
    return { kind: `${r.kind}List`, apiVersion: apiVersionOf(r), metadata, items };
  }

  #matcher(q: URLSearchParams): (o: KubeObject) => boolean {
    let labels;
    let fields;
    try {
      labels = parseLabelSelector(q.get('labelSelector') ?? '');
      fields = parseFieldSelector(q.get('fieldSelector') ?? '');
    } catch (err) {
      throw new StatusFailure(400, 'BadRequest', err instanceof Error ? err.message : String(err));
    }
    return (o) => matchLabels(labels, o.metadata.labels) && matchFields(fields, (f) => fieldValue(o, f));
  }

  #bind(r: ResourceType, namespace: string | undefined, name: string, binding: KubeObject & Record<string, unknown>): object {
    const pod = this.store.mustGet(r, namespace, name) as KubeObject & { spec?: { nodeName?: string } };
    const target = (binding.target as { name?: string } | undefined)?.name;
    if (!target) throw new StatusFailure(422, 'Invalid', 'Binding is invalid: target.name: Required value');
    if (pod.spec?.nodeName) throw new StatusFailure(409, 'Conflict', `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
    pod.spec = { ...pod.spec, nodeName: target };
    this.store.update(r, pod);
    return success(r, name);
  }

  /** Graceful pod deletion and finalizers; returns the object when it still exists (or for pods). */
  #delete(r: ResourceType, ns: string | undefined, name: string, o: { gracePeriodSeconds?: number; preconditions?: { uid?: string; resourceVersion?: string } }): KubeObject | undefined {
    const cur = this.store.mustGet(r, ns, name) as KubeObject & { spec?: { nodeName?: string; terminationGracePeriodSeconds?: number } };
    if (r.kind === 'Pod') {
      const grace = o.gracePeriodSeconds ?? cur.spec?.terminationGracePeriodSeconds ?? 30;
      // Unscheduled pods have no kubelet to wait for; grace 0 is the node's final delete.
      if (grace > 0 && cur.spec?.nodeName) return this.store.markDeleting(r, ns, name, grace);
      if (cur.metadata.finalizers?.length) return this.store.markDeleting(r, ns, name, 0);
      return this.store.remove(r, ns, name, o.preconditions);
    }
    if (cur.metadata.finalizers?.length) return this.store.markDeleting(r, ns, name, 0);
    this.store.remove(r, ns, name, o.preconditions);
    return undefined;
  }

  #patch(r: ResourceType, ns: string | undefined, name: string, subresource: string | undefined, contentType: string, body: string): KubeObject {
    const type = contentType.split(';')[0]?.trim() ?? '';
    // The media type is checked first, as kube-apiserver's patch handler does: an unknown one is
    // 415 whether or not the object exists.
    if (!PATCH_TYPES.includes(type)) {
      throw new StatusFailure(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.join(', ')}`);
    }
    let patch: unknown;
    try {
      patch = JSON.parse(body);
    } catch {
      throw new StatusFailure(400, 'BadRequest', 'the patch body is not valid JSON');
    }
    const cur = this.store.get(r, ns, name);
    if (!cur) {
      if (type === 'application/apply-patch+yaml' && subresource === undefined) {
        const obj = patch as KubeObject;
        obj.metadata = { ...obj.metadata, name, namespace: r.namespaced ? ns : undefined };
        return this.store.create(r, obj);
      }
      throw new StatusFailure(404, 'NotFound', `${r.plural} "${name}" not found`, { name, kind: r.plural });
    }
    let next: KubeObject;
    try {
      if (type === 'application/json-patch+json') {
        if (!Array.isArray(patch)) throw new StatusFailure(400, 'BadRequest', 'json patch must be an array');
        next = applyJsonPatch(cur, patch) as KubeObject;
      } else if (type === 'application/merge-patch+json' || type === 'application/strategic-merge-patch+json' || type === 'application/apply-patch+yaml') {
        // HACK(test fixture): strategic merge and apply are treated as merge patches here.
        next = mergePatch(cur, patch) as KubeObject;
      } else {
        // Unreachable: PATCH_TYPES was checked above.
        throw new StatusFailure(415, 'UnsupportedMediaType', type);
      }
    } catch (err) {
      if (err instanceof StatusFailure) throw err;
      throw new StatusFailure(422, 'Invalid', err instanceof Error ? err.message : String(err));
    }
    next.metadata = { ...next.metadata, name, namespace: cur.metadata.namespace };
    return this.store.update(r, next, { subresource });
  }
}

function sendJson(res: http.ServerResponse, code: number, body: unknown): void {
  const data = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) });
  res.end(data);
}

function success(r: ResourceType, name: string): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name, group: r.group, kind: r.plural } };
}

/** RFC 6902 with the library the real server uses; a failed `test` or a missing path throws. */
function applyJsonPatch(doc: unknown, ops: unknown): unknown {
  return jsonpatch.applyPatch(structuredClone(doc), ops as jsonpatch.Operation[], true, false).newDocument;
}
