/**
 * Validating admission: checks that need the caller's identity and the old and new object,
 * run after the object is defaulted and validated and before it is written (kube-apiserver's
 * admission chain, validating half). A plugin throws a StatusError (403 Forbidden) to refuse.
 */
import type { UserInfo } from '../auth/types.js';
import type { ServerContext } from '../context.js';
import type { ApiObject } from '../object.js';
import type { ResourceDef } from '../resource.js';

/** CONNECT (exec, attach, port-forward) goes to the webhooks only ({@link admitConnect} in index.ts). */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  operation: AdmissionOperation;
  user: UserInfo;
  def: ResourceDef;
  subresource?: string;
  namespace?: string;
  /** The object's name (for creates: from the body). */
  name?: string;
  /** CREATE/UPDATE: the object to be written. */
  object?: ApiObject;
  /** UPDATE/DELETE: the stored object. */
  oldObject?: ApiObject;
  /** Where a plugin leaves warnings for the client and annotations for the audit log (recorder.ts); absent: dropped. */
  recorder?: AdmissionRecorder;
  /** `?dryRun=All`: judge as usual, but nothing will be written (no quota is charged; webhooks are told, and those with side effects refuse). */
  dryRun?: boolean;
  /** The request's signal (filters/chain.ts): admission stops with its reason once it aborts. */
  signal?: AbortSignal;
}

/**
 * What admission says besides allow or refuse: `Warning` headers (kubectl prints them) and audit
 * annotations (upstream's `audit.AddAuditAnnotations`), both kept even when the request fails.
 */
export interface AdmissionRecorder {
  warn(text: string): void;
  annotate(key: string, value: string): void;
}

export type AdmissionPlugin = (ctx: ServerContext, r: AdmissionRequest) => Promise<void> | void;
