/**
 * The AdmissionReview v1 wire format: the request a webhook is sent and the checks on its answer
 * (upstream VerifyAdmissionResponse), and the two errors a webhook turns into: a call failure
 * (500 `Internal error occurred: failed calling webhook "<name>": …`) and a denial (the webhook's
 * status, code 400 when it sets none below 400, `admission webhook "<name>" denied the request: …`).
 */
import type { StatusDetails } from '@nodelet/api';
import { withTypeMeta } from '../../context.js';
import { isPlainObject, newUid, type ApiObject, type Json } from '../../object.js';
import { StatusError } from '../../status.js';
import type { AdmissionRequest } from '../types.js';
import { WebhookCallError } from './client.js';

export const REVIEW_API_VERSION = 'admission.k8s.io/v1';

const OPTIONS_KIND = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions' } as const;

/** The review sent for `r`; `object`/`oldObject` carry apiVersion and kind as served. */
export function reviewOf(r: AdmissionRequest, object: ApiObject | undefined): { uid: string; review: Json } {
  const uid = newUid();
  const { def } = r;
  const subKind = r.subresource ? def.subresources.find((s) => s.name === r.subresource)?.kind : undefined;
  const kind = subKind ?? { group: def.group, version: def.version, kind: def.kind };
  const resource = { group: def.group, version: def.version, resource: def.plural };
  const request: Json = {
    uid, kind, resource, requestKind: kind, requestResource: resource,
    ...(r.subresource ? { subResource: r.subresource, requestSubResource: r.subresource } : {}),
    ...(r.name ? { name: r.name } : {}),
    ...(r.namespace ? { namespace: r.namespace } : {}),
    operation: r.operation,
    userInfo: { username: r.user.name, ...(r.user.uid ? { uid: r.user.uid } : {}), groups: [...r.user.groups], ...(r.user.extra ? { extra: r.user.extra } : {}) },
    // A subresource with a kind of its own (Eviction, TokenRequest) sends that kind's object.
    object: object ? (subKind ? { apiVersion: subKind.group ? `${subKind.group}/${subKind.version}` : subKind.version, kind: subKind.kind, ...object } : withTypeMeta(def, object)) : null,
    oldObject: r.oldObject ? withTypeMeta(def, r.oldObject) : null,
    dryRun: !!r.dryRun,
    // CONNECT has no operation options (its object is the connect options): null, as upstream sends.
    options: r.operation === 'CONNECT' ? null : { apiVersion: 'meta.k8s.io/v1', kind: OPTIONS_KIND[r.operation], ...(r.dryRun ? { dryRun: ['All'] } : {}) },
  };
  return { uid, review: { apiVersion: REVIEW_API_VERSION, kind: 'AdmissionReview', request } };
}

/** What a webhook answered, checked. */
export interface ReviewResponse {
  allowed: boolean;
  status?: Json;
  /** JSONPatch operations (mutating webhooks only). */
  patch?: unknown[];
  warnings: string[];
  auditAnnotations: Record<string, string>;
}

const invalid = (why: string): WebhookCallError => new WebhookCallError(`received invalid webhook response: ${why}`);

/** The response of `answer`, or a {@link WebhookCallError} for one upstream would not accept. */
export function parseResponse(answer: unknown, uid: string, mutating: boolean): ReviewResponse {
  if (!isPlainObject(answer)) throw invalid('webhook response was absent');
  if (answer.apiVersion !== REVIEW_API_VERSION || answer.kind !== 'AdmissionReview') {
    throw invalid(`expected webhook response of ${REVIEW_API_VERSION}, Kind=AdmissionReview, got ${String(answer.apiVersion ?? '')}, Kind=${String(answer.kind ?? '')}`);
  }
  const res = answer.response;
  if (!isPlainObject(res)) throw invalid('webhook response was absent');
  if (res.uid !== uid) throw invalid(`expected response.uid="${uid}", got "${String(res.uid ?? '')}"`);
  const out: ReviewResponse = {
    allowed: res.allowed === true,
    warnings: Array.isArray(res.warnings) ? res.warnings.filter((w): w is string => typeof w === 'string') : [],
    auditAnnotations: isPlainObject(res.auditAnnotations) ? Object.fromEntries(Object.entries(res.auditAnnotations).map(([k, v]) => [k, String(v)])) : {},
    ...(isPlainObject(res.status) ? { status: res.status } : {}),
  };
  const hasPatch = typeof res.patch === 'string' && res.patch !== '';
  if (hasPatch && !mutating) throw invalid('validating webhook may not return response.patch');
  if (hasPatch && res.patchType === undefined) throw invalid('webhook returned response.patch but not response.patchType');
  if (res.patchType !== undefined && res.patchType !== null && res.patchType !== 'JSONPatch') throw invalid(`webhook returned invalid patchType: "${String(res.patchType)}"`);
  if (hasPatch) {
    let ops: unknown;
    try {
      ops = JSON.parse(Buffer.from(res.patch as string, 'base64').toString('utf8'));
    } catch (err) {
      throw new StatusError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`);
    }
    if (!Array.isArray(ops)) throw new StatusError(500, 'InternalError', 'Internal error occurred: the JSON patch is not a list of operations');
    out.patch = ops;
  }
  return out;
}

/** A webhook that could not be called, under failurePolicy Fail (upstream NewInternalError(ErrCallingWebhook)). */
export function callFailure(name: string, err: WebhookCallError): StatusError {
  const text = `failed calling webhook "${name}": ${err.message}`;
  return new StatusError(500, 'InternalError', `Internal error occurred: ${text}`, { causes: [{ message: text }] } as StatusDetails);
}

/** A denial as the API error (upstream ToStatusErr). */
export function denial(name: string, status: Json | undefined): StatusError {
  const deniedBy = `admission webhook "${name}" denied the request`;
  const code = typeof status?.code === 'number' && status.code >= 400 ? status.code : 400;
  const reason = typeof status?.reason === 'string' ? status.reason : '';
  const message = typeof status?.message === 'string' && status.message ? `${deniedBy}: ${status.message}` : reason ? `${deniedBy}: ${reason}` : `${deniedBy} without explanation`;
  return new StatusError(code, reason, message, isPlainObject(status?.details) ? (status.details as StatusDetails) : undefined);
}
