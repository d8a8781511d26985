/**
 * `POST …/serviceaccounts/<name>/token` (TokenRequest, authentication.k8s.io/v1; `kubectl create
 * token`, and the agent for projected tokens): a bound service-account JWT (auth/serviceaccount/tokens.ts).
 *
 *   spec.audiences          default: the API server's audiences
 *   spec.expirationSeconds  default 3600, at least 600
 *   spec.boundObjectRef     Pod, Secret or Node (apiVersion v1) that must exist, with the given UID;
 *                           a Pod must run as this service account (spec.serviceAccountName);
 *                           a Pod binding also records the pod's node in the token
 *
 * Authorized as `create serviceaccounts/token`; NodeRestriction lets a node ask only for pods
 * bound to it.
 */
import { writeOptionsOf } from '../request-options.js';
import { admit } from '../admission/index.js';
import type { RequestScope } from '../context.js';
import { bodyOf, decodeObjectBody } from '../media.js';
import { isPlainObject, type Json } from '../object.js';
import { sendJson } from '../respond.js';
import { badRequest, forbidden, invalid, notFound, StatusError } from '../status.js';
import type { BoundRef } from '../auth/serviceaccount/tokens.js';
import { rfc3339 } from '@nodelet/api';

const MIN_EXPIRATION_SECONDS = 600;
const DEFAULT_EXPIRATION_SECONDS = 3600;

export async function handleTokenRequest(s: RequestScope): Promise<void> {
  const tokens = s.ctx.serviceAccountTokens;
  if (!tokens) throw new StatusError(404, 'NotFound', 'the server does not issue service account tokens (no signing key configured)');
  // Options are checked as for any create; a token request stores nothing, so a dry run issues as usual.
  writeOptionsOf(s.url, 'CreateOptions');
  const body = decodeObjectBody(s.req.headers['content-type'], await bodyOf(s));
  const spec = (isPlainObject(body.spec) ? body.spec : {}) as Json;
  const audiences = Array.isArray(spec.audiences) && spec.audiences.length ? spec.audiences.map(String) : tokens.audiences;
  const expirationSeconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? DEFAULT_EXPIRATION_SECONDS : Number(spec.expirationSeconds);
  if (!Number.isInteger(expirationSeconds) || expirationSeconds < MIN_EXPIRATION_SECONDS) {
    throw invalid('TokenRequest', 'authentication.k8s.io', s.name!, [{ reason: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `may not specify a duration less than ${MIN_EXPIRATION_SECONDS} seconds` }]);
  }
  const ref = isPlainObject(spec.boundObjectRef) ? (spec.boundObjectRef as Record<string, string | undefined>) : undefined;
  const kinds: Record<string, string> = { Pod: 'pods', Secret: 'secrets', Node: 'nodes' };
  const plural = ref?.kind ? kinds[ref.kind] : undefined;
  const refOk = !!ref && !!plural && (!ref.apiVersion || ref.apiVersion === 'v1') && !!ref.name;
  // The account and the bound object are read from the store (as upstream's TokenREST does) at
  // once: on etcd each read is a round trip, and one after the other they were most of the time.
  const [sa, obj] = await Promise.all([
    s.ctx.resource('', 'v1', 'serviceaccounts')!.registry.find(s.namespace, s.name!),
    refOk ? s.ctx.resource('', 'v1', plural!)!.registry.find(plural === 'nodes' ? undefined : s.namespace, ref!.name!) : undefined,
  ]);
  if (!sa) throw notFound('serviceaccounts', '', s.name!);

  let bound: BoundRef | undefined;
  let nodeName: unknown;
  if (ref) {
    if (!plural || (ref.apiVersion && ref.apiVersion !== 'v1')) throw badRequest(`cannot bind token to object of type ${ref.apiVersion ?? ''}/${ref.kind ?? ''}; only v1 Pod, Secret and Node are supported`);
    if (!ref.name) throw badRequest('boundObjectRef.name is required');
    if (!obj || obj.metadata.deletionTimestamp) throw notFound(plural, '', ref.name);
    if (ref.uid && ref.uid !== obj.metadata.uid) {
      throw new StatusError(409, 'Conflict', `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    // A pod's token is its own account's: binding `default` to a pod that runs as another account
    // (or, a mirror pod, as none) would hand out that account's identity on the pod's behalf.
    if (plural === 'pods' && (obj.spec as Json | undefined)?.serviceAccountName !== s.name) {
      throw badRequest(`cannot bind token for serviceaccount "${s.name!}" to pod running with different serviceaccount name.`);
    }
    bound = { kind: ref.kind as BoundRef['kind'], name: ref.name, uid: obj.metadata.uid! };
    nodeName = plural === 'pods' ? (obj.spec as Json | undefined)?.nodeName : undefined;
  }
  // The pod's node (recorded in the token) is read while admission runs.
  const [, n] = await Promise.all([
    admit(s.ctx, { operation: 'CREATE', user: s.user, def: s.served.def, subresource: 'token', namespace: s.namespace, name: s.name, object: { metadata: {}, ...body } }),
    typeof nodeName === 'string' && nodeName ? s.ctx.resource('', 'v1', 'nodes')!.registry.find(undefined, nodeName) : undefined,
  ]);
  const node = n && typeof nodeName === 'string' ? { name: nodeName, uid: n.metadata.uid! } : undefined;
  const { token, expirationTimestamp } = await tokens.issue({ sa, audiences, expirationSeconds, bound, node, nowMs: s.ctx.now() });
  if (!token) throw forbidden('token could not be issued');
  sendJson(s.res, 201, {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: s.name, namespace: s.namespace, creationTimestamp: rfc3339(s.ctx.now()) },
    spec: { audiences, expirationSeconds, ...(ref ? { boundObjectRef: ref } : {}) },
    status: { token, expirationTimestamp: rfc3339(expirationTimestamp) },
  });
}
