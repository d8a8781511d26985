/**
 * The {@link AdmissionRecorder} of one request: warnings become `Warning: 299 - "…"` response
 * headers (RFC 7234 form, as kube-apiserver writes them; kubectl prints `Warning: …`), audit
 * annotations go on the request scope for the audit log.
 */
import type { ServerResponse } from 'node:http';
import type { RequestScope } from '../context.js';
import type { AdmissionRecorder } from './types.js';

/** `text` as a warning header value: quoted, with `"` and `\` escaped. */
export function warningHeaderValue(text: string): string {
  return `299 - "${text.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * Adds a `Warning` header unless the same text is already there (an update that retries on a
 * conflict admits twice; upstream's recorder keeps one of each). Headers already sent: dropped.
 */
export function addWarning(res: ServerResponse, text: string): void {
  if (res.headersSent) return;
  const value = warningHeaderValue(text);
  const current = res.getHeader('Warning');
  const existing = current === undefined ? [] : Array.isArray(current) ? current : [String(current)];
  if (existing.includes(value)) return;
  res.setHeader('Warning', [...existing, value]);
}

export function scopeRecorder(s: RequestScope): AdmissionRecorder {
  return {
    warn: (text) => addWarning(s.res, text),
    annotate: (key, value) => {
      (s.auditAnnotations ??= {})[key] = value;
    },
  };
}
