/**
 * The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins: the webhooks of every
 * configuration (sorted by configuration name, then in list order) whose rules and selectors
 * match the request are called with an AdmissionReview.
 *
 *   mutating    one at a time; a JSONPatch answer changes the object the next one sees; a webhook
 *               with reinvocationPolicy IfNeeded is called once more when another changed the
 *               object after its call.
 *   validating  all at once; the first refusal (in webhook order) is the answer.
 *
 * A denial is the request's error; a webhook that cannot be called fails the request under
 * failurePolicy Fail and is skipped under Ignore (with a `failed-open…` audit annotation).
 * Warnings go to the client, audit annotations to the audit event as `<webhook>/<key>`.
 */
import type { MutatingWebhook } from '@nodelet/api';
import type { ServerContext } from '../../context.js';
import { isPlainObject, jsonEqual, type ApiObject } from '../../object.js';
import { badRequest, StatusError } from '../../status.js';
import { applyJsonPatch } from '../../patch/json-patch.js';
import type { AdmissionRequest } from '../types.js';
import { postReview, WebhookCallError } from './client.js';
import { isExempt, webhookMatches } from './match.js';
import { callFailure, denial, parseResponse, reviewOf, type ReviewResponse } from './review.js';

const GROUP = 'admissionregistration.k8s.io';

interface Hook {
  configuration: string;
  webhook: MutatingWebhook;
  /** Position among all webhooks of the kind (the audit annotations' index). */
  index: number;
}

/** The webhooks of every configuration of `plural`, from the server's mirror when it keeps one. */
async function hooksOf(ctx: ServerContext, plural: string): Promise<Hook[]> {
  const served = ctx.resource(GROUP, 'v1', plural);
  if (!served) return [];
  const mirror = ctx.mirrorOf?.(served.def);
  const configs = mirror ? [...mirror.all()] : (await served.registry.list({ filter: () => true })).items;
  const hooks: Hook[] = [];
  for (const c of [...configs].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0))) {
    for (const w of Array.isArray(c.webhooks) ? c.webhooks : []) hooks.push({ configuration: c.metadata.name!, webhook: w as MutatingWebhook, index: hooks.length });
  }
  return hooks;
}

/** The matching webhooks; a dry run refuses any that may have side effects (upstream's 400). */
async function matching(ctx: ServerContext, r: AdmissionRequest, hooks: Hook[]): Promise<Hook[]> {
  const out: Hook[] = [];
  for (const h of hooks) {
    if (!(await webhookMatches(ctx, h.webhook, r))) continue;
    if (r.dryRun && h.webhook.sideEffects !== 'None' && h.webhook.sideEffects !== 'NoneOnDryRun') throw badRequest(`admission webhook "${h.webhook.name}" does not support dry run`);
    out.push(h);
  }
  return out;
}

/**
 * One call: the checked response, or undefined when the call failed under failurePolicy Ignore.
 * Warnings and audit annotations are recorded whatever the answer.
 */
async function call(ctx: ServerContext, r: AdmissionRequest, h: Hook, object: ApiObject | undefined, mutating: boolean, round: number): Promise<ReviewResponse | undefined> {
  const w = h.webhook;
  const { uid, review } = reviewOf(r, object);
  try {
    const res = parseResponse(await postReview(ctx, w.clientConfig, w.timeoutSeconds ?? 10, review, r.signal), uid, mutating);
    for (const text of res.warnings) r.recorder?.warn(text);
    for (const [k, v] of Object.entries(res.auditAnnotations)) r.recorder?.annotate(`${w.name}/${k}`, v);
    return res;
  } catch (err) {
    if (!(err instanceof WebhookCallError)) throw err;
    if (w.failurePolicy === 'Ignore') {
      ctx.logger.warn({ webhook: w.name, error: err.message }, 'Admission webhook failed; ignored (failurePolicy Ignore)');
      r.recorder?.annotate(`failed-open.${mutating ? 'mutation' : 'validating'}.webhook.admission.k8s.io/round_${round}_index_${h.index}`, w.name);
      return undefined;
    }
    throw callFailure(w.name, err);
  }
}

/** Replaces `target`'s fields with `source`'s, keeping the server-owned metadata `target` had. */
function replaceObject(target: ApiObject, source: ApiObject): void {
  const kept = target.metadata;
  for (const k of Object.keys(target)) delete (target as Record<string, unknown>)[k];
  Object.assign(target, source);
  const meta = { ...source.metadata };
  for (const f of ['name', 'namespace', 'uid', 'creationTimestamp', 'resourceVersion', 'generation', 'deletionTimestamp', 'deletionGracePeriodSeconds'] as const) {
    if (kept[f] === undefined) delete meta[f];
    else (meta as Record<string, unknown>)[f] = kept[f];
  }
  target.metadata = meta;
}

/** Applies a mutating webhook's patch to `obj` in place; true when it changed something. */
function applyPatchOf(name: string, r: AdmissionRequest, obj: ApiObject | undefined, ops: unknown[]): boolean {
  if (!obj) throw new StatusError(500, 'InternalError', `Internal error occurred: admission webhook "${name}" attempted to modify the object, which is not supported for this operation`);
  let patched: unknown;
  try {
    patched = applyJsonPatch(obj, ops);
  } catch (err) {
    throw new StatusError(500, 'InternalError', `Internal error occurred: ${(err as Error).message}`);
  }
  if (!isPlainObject(patched) || !isPlainObject(patched.metadata) || patched.apiVersion !== obj.apiVersion || patched.kind !== obj.kind) {
    throw new StatusError(500, 'InternalError', `Internal error occurred: admission webhook "${name}" returned a patch that does not leave a ${r.def.kind} of ${obj.apiVersion ?? ''}`);
  }
  if (jsonEqual(patched, obj)) return false;
  replaceObject(obj, patched as ApiObject);
  return true;
}

/**
 * Calls the matching mutating webhooks, changing `r.object` in place. Returns whether any
 * changed it (the caller defaults and validates the object again then).
 */
export async function runMutatingWebhooks(ctx: ServerContext, r: AdmissionRequest): Promise<boolean> {
  if (isExempt(r)) return false;
  const hooks = await matching(ctx, r, await hooksOf(ctx, 'mutatingwebhookconfigurations'));
  if (!hooks.length) return false;
  let changes = 0;
  /** The change count each webhook saw when it last ran (reinvocation compares). */
  const seen = new Map<Hook, number>();
  const runOne = async (h: Hook, round: number): Promise<void> => {
    r.signal?.throwIfAborted();
    const res = await call(ctx, r, h, r.object, true, round);
    if (res && !res.allowed) throw denial(h.webhook.name, res.status);
    const changed = !!res?.patch && applyPatchOf(h.webhook.name, r, r.object, res.patch);
    if (changed) changes++;
    r.recorder?.annotate(`mutation.webhook.admission.k8s.io/round_${round}_index_${h.index}`, JSON.stringify({ configuration: h.configuration, webhook: h.webhook.name, mutated: changed }));
    seen.set(h, changes);
  };
  for (const h of hooks) await runOne(h, 0);
  for (const h of hooks) {
    if (h.webhook.reinvocationPolicy === 'IfNeeded' && changes > (seen.get(h) ?? changes)) await runOne(h, 1);
  }
  return changes > 0;
}

/** Calls the matching validating webhooks in parallel; throws the first refusal or failure in webhook order. */
export async function runValidatingWebhooks(ctx: ServerContext, r: AdmissionRequest): Promise<void> {
  if (isExempt(r)) return;
  const hooks = await matching(ctx, r, await hooksOf(ctx, 'validatingwebhookconfigurations'));
  if (!hooks.length) return;
  const outcomes = await Promise.allSettled(hooks.map((h) => call(ctx, r, h, r.object, false, 0)));
  for (const [i, o] of outcomes.entries()) {
    if (o.status === 'rejected') throw o.reason;
    if (o.value && !o.value.allowed) throw denial(hooks[i]!.webhook.name, o.value.status);
  }
}
