/** Chooses the handler of a resource request by method, name and subresource. */
import { queryBool } from '@nodelet/api';
import type { RequestScope } from '../context.js';
import { withTypeMeta } from '../context.js';
import { compileFilter } from '../filter.js';
import { bodyOf, parseJson } from '../media.js';
import { sendJson, sendObject } from '../respond.js';
import { methodNotAllowed, notFoundPathFor } from './errors.js';
import { badRequest } from '../status.js';
import { deleteObject, parseDeleteOptions } from './delete.js';
import { handleLog } from './node-proxy.js';
import { handleProxy } from './proxy.js';
import { handleBinding } from './pod-subresources.js';
import { handleEviction } from './eviction.js';
import { handleTokenRequest } from './token-request.js';
import { handleGet, handleList } from './reads.js';
import { handleScale } from './scale.js';
import { EPHEMERAL_HANDLERS } from './access-review.js';
import { handleNodeCredentialRequest } from '../auth/node-credentials.js';
import { admit } from '../admission/index.js';
import { scopeRecorder } from '../admission/recorder.js';
import { awaitVisible } from './visibility.js';
import { addWarnings } from '../field-validation.js';
import { warningHeaderValue } from '../admission/recorder.js';
import type { ApiObject } from '../object.js';
import { handleWatch } from './watch.js';
import { handleCreate, handlePatch, handleUpdate } from './writes.js';

const isWatch = (url: URL): boolean => queryBool(url.searchParams, 'watch');

export async function dispatch(s: RequestScope): Promise<void> {
  const method = s.req.method ?? 'GET';
  const { def } = s.served;
  const sub = s.subresource;
  if (def.custom?.deprecationWarning) addWarnings(s.res, [warningHeaderValue(def.custom.deprecationWarning)]);
  if (def.ephemeral) {
    if (method !== 'POST' || s.name || sub) throw methodNotAllowed();
    const handler = def.kind === 'NodeCredentialRequest' ? handleNodeCredentialRequest : EPHEMERAL_HANDLERS[def.kind];
    if (!handler) throw methodNotAllowed();
    return handler(s);
  }
  if (sub) {
    if (!def.subresources.some((d) => d.name === sub)) throw notFoundPathFor();
    if (!s.name) throw notFoundPathFor();
    if (sub === 'scale') return handleScale(s);
    if (sub === 'status' || sub === 'approval' || sub === 'ephemeralcontainers' || sub === 'resize') {
      if (method === 'GET') return handleGet(s);
      if (method === 'PUT') return handleUpdate(s);
      if (method === 'PATCH') return handlePatch(s);
      throw methodNotAllowed();
    }
    if (sub === 'binding' && method === 'POST') return handleBinding(s);
    if (sub === 'token' && method === 'POST') return handleTokenRequest(s);
    if (sub === 'eviction' && method === 'POST') return handleEviction(s);
    if (sub === 'log' && method === 'GET') return handleLog(s);
    if (sub === 'proxy' && def.group === '') return handleProxy(s);
    if (sub === 'exec' || sub === 'attach' || sub === 'portforward') throw badRequest('Upgrade request required');
    if (sub === 'finalize' && method === 'PUT') return handleUpdate({ ...s, subresource: undefined });
    throw methodNotAllowed();
  }
  if (!s.name) {
    if (method === 'GET') return isWatch(s.url) ? handleWatch(s) : handleList(s);
    if (method === 'POST' && s.ctx.catalog.isTerminating(def)) throw methodNotAllowed('create not allowed while custom resource definition is terminating');
    if (method === 'POST') return handleCreate(s);
    if (method === 'DELETE') return handleDeleteCollection(s);
    throw methodNotAllowed();
  }
  switch (method) {
    case 'GET':
      return handleGet(s);
    case 'PUT':
      return handleUpdate(s);
    case 'PATCH':
      return handlePatch(s);
    case 'DELETE':
      return handleDelete(s);
    default:
      throw methodNotAllowed();
  }
}

async function readDeleteBody(s: RequestScope): Promise<unknown> {
  const raw = await bodyOf(s);
  return raw.length ? parseJson(raw) : {};
}

/** The admission hook of a delete by the request's user. */
function admitDeleteBy(s: RequestScope, name: string, dryRun: boolean | undefined): (current: ApiObject) => Promise<void> {
  return (current) => admit(s.ctx, { operation: 'DELETE', user: s.user, def: s.served.def, namespace: current.metadata.namespace, name, oldObject: current, recorder: scopeRecorder(s), dryRun: !!dryRun, signal: s.signal });
}

async function handleDelete(s: RequestScope): Promise<void> {
  const opts = parseDeleteOptions(await readDeleteBody(s), s.url.searchParams);
  const { object, removed } = await deleteObject(s.ctx, s.served, s.namespace, s.name!, opts, admitDeleteBy(s, s.name!, opts.dryRun));
  await awaitVisible(s.ctx, s.served.def, object);
  if (removed && !s.served.def.returnDeletedObject) return sendJson(s.res, 200, deletedStatus(s.served.def, object));
  sendObject(s.res, 200, s.served.def, object, s.req.headers.accept, s.url, s.ctx.now());
}

/** What kube-apiserver answers for an object removed at once by a store without ReturnDeletedObject. */
function deletedStatus(def: RequestScope['served']['def'], obj: ApiObject): Record<string, unknown> {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    // `kind` holds the resource (plural), as upstream's finalizeDelete sets it.
    details: { name: obj.metadata.name, ...(def.group ? { group: def.group } : {}), kind: def.plural, uid: obj.metadata.uid },
  };
}

async function handleDeleteCollection(s: RequestScope): Promise<void> {
  const { def, registry } = s.served;
  const opts = parseDeleteOptions(await readDeleteBody(s), s.url.searchParams);
  const filter = compileFilter(def, s.url.searchParams.get('labelSelector'), s.url.searchParams.get('fieldSelector'));
  const page = await registry.list({ namespace: s.namespace, filter });
  const items = [];
  for (const o of page.items) {
    try {
      items.push((await deleteObject(s.ctx, s.served, o.metadata.namespace, o.metadata.name!, opts, admitDeleteBy(s, o.metadata.name!, opts.dryRun))).object);
    } catch (err) {
      if ((err as { reason?: string }).reason !== 'NotFound') throw err;
    }
  }
  sendJson(s.res, 200, {
    kind: `${def.kind}List`,
    apiVersion: def.group ? `${def.group}/${def.version}` : def.version,
    metadata: { resourceVersion: page.resourceVersion },
    items: items.map((o) => withTypeMeta(def, o)),
  });
}
