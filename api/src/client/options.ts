/** Option objects of ApiClient and ResourceClient calls. Every call takes an AbortSignal. */
import type { Preconditions } from '../types/meta.js';

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's default request timeout. */
  timeoutMs?: number;
}

export interface GetOptions extends CallOptions {
  namespace?: string;
  /** e.g. `scale` (reply `Scale`) or `status`. */
  subresource?: string;
  /** `'0'` = any cached version is fine; unset = most recent. */
  resourceVersion?: string;
}

export interface SelectorOptions {
  /** `app=web,tier in (a,b),!canary` */
  labelSelector?: string;
  /** `spec.nodeName=node-1,status.phase!=Succeeded` */
  fieldSelector?: string;
}

export interface ListOptions extends CallOptions, SelectorOptions {
  /** Omit for all namespaces of a namespaced resource. */
  namespace?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'NotOlderThan' | 'Exact';
}

export interface WatchOptions extends CallOptions, SelectorOptions {
  namespace?: string;
  /** Changes after this version; unset or `'0'` → synthetic ADDED events for the current state first. */
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** Server closes the watch after this long. */
  timeoutSeconds?: number;
}

export interface WriteOptions extends CallOptions {
  /** Defaults to the object's `metadata.namespace`. */
  namespace?: string;
  fieldManager?: string;
  dryRun?: boolean;
  fieldValidation?: 'Ignore' | 'Warn' | 'Strict';
}

export interface CreateOptions extends WriteOptions {
  /** For subresource creates (`pods/<name>/binding`, `pods/<name>/eviction`). */
  name?: string;
  subresource?: string;
}

export interface UpdateOptions extends WriteOptions {
  subresource?: string;
}

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

export const PATCH_CONTENT_TYPES: Readonly<Record<PatchType, string>> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

export interface PatchOptions extends WriteOptions {
  type: PatchType;
  subresource?: string;
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteCallOptions extends CallOptions {
  namespace?: string;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  dryRun?: boolean;
}

export interface RawOptions extends CallOptions {
  query?: Record<string, string | number | boolean | undefined>;
  accept?: string;
}
