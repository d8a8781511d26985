/**
 * Reading the API server's audit log (audit.k8s.io/v1 Event JSON lines) for `nodelet audit`:
 * the current file and its rotated backups, oldest first, filtered. docs/security.md
 * "Audit logging" has the same questions answered with jq.
 */
import { createReadStream, existsSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { createInterface } from 'node:readline';

/** The event fields the query reads (the rest is printed as is with `-o json`). */
export interface AuditEventLine {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  user?: { username?: string };
  impersonatedUser?: { username?: string };
  sourceIPs?: string[];
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string; apiGroup?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
}

export interface AuditQuery {
  verb?: string;
  /** `pods`, `pods/log`, or `deployments.apps` (resource.group). */
  resource?: string;
  name?: string;
  namespace?: string;
  /** Matches the authenticated user or the one it impersonated. */
  user?: string;
  /** Epoch ms: events received at or after it. */
  since?: number;
  /** A stage, or `all`; default: the last stage of each request (ResponseComplete, Panic, or a failed login's ResponseStarted). */
  stage?: string;
}

const FINAL_STAGES = new Set(['ResponseComplete', 'Panic']);

export function matchesQuery(ev: AuditEventLine, q: AuditQuery): boolean {
  if (q.stage === undefined ? !FINAL_STAGES.has(ev.stage) && !(ev.stage === 'ResponseStarted' && ev.responseStatus?.code === 401) : q.stage !== 'all' && ev.stage !== q.stage) return false;
  if (q.verb && ev.verb !== q.verb) return false;
  const ref = ev.objectRef;
  if (q.resource) {
    const [res = '', sub] = q.resource.split('/');
    const dot = res.indexOf('.');
    const [resource, group] = dot >= 0 ? [res.slice(0, dot), res.slice(dot + 1)] : [res, undefined];
    if (ref?.resource !== resource || (group !== undefined && (ref.apiGroup ?? '') !== group) || (sub !== undefined && ref.subresource !== sub)) return false;
  }
  if (q.name && ref?.name !== q.name) return false;
  if (q.namespace && ref?.namespace !== q.namespace) return false;
  if (q.user && ev.user?.username !== q.user && ev.impersonatedUser?.username !== q.user) return false;
  if (q.since !== undefined && Date.parse(ev.requestReceivedTimestamp) < q.since) return false;
  return true;
}

/**
 * `path` and its rotated backups (`<stem>-<time><ext>`, the server's rotation names), oldest
 * first, so that events come out in the order they were written.
 */
export function auditLogFiles(path: string): string[] {
  const dir = dirname(path);
  const ext = extname(path);
  const stem = basename(path, ext);
  const stamp = /^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}\.\d{3}$/;
  const backups = existsSync(dir)
    ? readdirSync(dir).filter((n) => n.startsWith(`${stem}-`) && n.endsWith(ext) && stamp.test(n.slice(stem.length + 1, n.length - ext.length))).sort()
    : [];
  return [...backups.map((n) => join(dir, n)), ...(existsSync(path) ? [path] : [])];
}

/** The events of `files` that match `q`, in file order. Lines that are not events are counted, not fatal. */
export async function queryAuditLog(files: readonly string[], q: AuditQuery): Promise<{ events: AuditEventLine[]; malformed: number }> {
  const events: AuditEventLine[] = [];
  let malformed = 0;
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (!line.trim()) continue;
      let ev: AuditEventLine;
      try {
        ev = JSON.parse(line) as AuditEventLine;
      } catch {
        // A line cut by a crash mid-write, or not an event: counted and reported.
        malformed++;
        continue;
      }
      if (typeof ev !== 'object' || ev === null || typeof ev.stage !== 'string') {
        malformed++;
        continue;
      }
      if (matchesQuery(ev, q)) events.push(ev);
    }
  }
  return { events, malformed };
}

/** One row per event: when, who (and as whom), what, on which object, the answer, from where. */
export function formatAuditTable(events: readonly AuditEventLine[]): string {
  const rows = [['TIME', 'USER', 'VERB', 'RESOURCE', 'NAMESPACE', 'NAME', 'CODE', 'SOURCE', 'AUDIT-ID']];
  for (const ev of events) {
    const ref = ev.objectRef;
    const user = ev.user?.username || '(unauthenticated)';
    rows.push([
      ev.requestReceivedTimestamp.replace(/\.\d+Z$/, 'Z'),
      ev.impersonatedUser?.username ? `${user} (as ${ev.impersonatedUser.username})` : user,
      ev.verb,
      ref?.resource ? `${ref.resource}${ref.apiGroup ? `.${ref.apiGroup}` : ''}${ref.subresource ? `/${ref.subresource}` : ''}` : ev.requestURI.split('?')[0]!,
      ref?.namespace ?? '',
      ref?.name ?? '',
      String(ev.responseStatus?.code ?? ''),
      (ev.sourceIPs ?? []).join(','),
      ev.auditID,
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}
