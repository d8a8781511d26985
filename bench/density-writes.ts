/**
 * bench/density `--count-writes`: the API writes the pod pipeline makes, from the server's own
 * audit log (docs/security.md "Audit logging"). The server runs with {@link WRITES_AUDIT_POLICY},
 * which logs every write at Metadata (no bodies) and nothing else; {@link countWrites} tallies the
 * lines of the measured window by writer and resource, so a run prints writes per pod beside the
 * total.
 */
import { readFileSync } from 'node:fs';
import { percentile } from './lib/percentile.js';

/** Writes only (create, update, patch, delete), one line each at the end of the request. */
export const WRITES_AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [create, update, patch, delete, deletecollection]
  - level: None
`;

/** Writes of one kind: who (a component), what (resource/subresource) and how (verb, with the status code when it failed). */
export interface WriteCount {
  writer: string;
  resource: string;
  verb: string;
  count: number;
  /**
   * The server's time on each of these writes (audit requestReceivedTimestamp → stageTimestamp,
   * microseconds on the wire), p50 and p99 in ms: how long a write waits in the server, apart
   * from how long its writer waited to send it.
   */
  serverP50Ms: number;
  serverP99Ms: number;
}

interface AuditLine {
  verb?: string;
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
  user?: { username?: string; groups?: string[] };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

/** The component a request came from: nodes as one, service accounts of kube-system by name, else the user. */
function writer(u: AuditLine['user']): string {
  const name = u?.username ?? '?';
  if (u?.groups?.includes('system:nodes')) return 'nodes (kubelet)';
  const sa = /^system:serviceaccount:kube-system:(.+)$/.exec(name);
  return sa ? sa[1]! : name;
}

/**
 * Counts the writes in audit log `file` whose end falls in [fromMs, toMs], grouped by writer,
 * resource and verb, most frequent first. Lease renewals are left out (they are per node and per
 * second, not per pod; bench/density reports them apart).
 */
export function countWrites(file: string, fromMs: number, toMs: number): WriteCount[] {
  const counts = new Map<string, { writer: string; resource: string; verb: string; ms: number[] }>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as AuditLine;
    const at = Date.parse(e.stageTimestamp ?? '');
    if (!(at >= fromMs && at <= toMs) || !e.verb || e.objectRef?.resource === 'leases') continue;
    const resource = `${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    const w = writer(e.user);
    const code = e.responseStatus?.code ?? 0;
    const verb = code >= 400 ? `${e.verb} → ${code}` : e.verb;
    const key = `${w}|${resource}|${verb}`;
    const c = counts.get(key) ?? { writer: w, resource, verb, ms: [] };
    // Date.parse keeps milliseconds of the microsecond timestamps: enough for a request's time.
    c.ms.push(at - Date.parse(e.requestReceivedTimestamp ?? ''));
    counts.set(key, c);
  }
  return [...counts.values()]
    .map(({ ms, ...c }) => ({ ...c, count: ms.length, serverP50Ms: percentile(ms, 50), serverP99Ms: percentile(ms, 99) }))
    .sort((a, b) => b.count - a.count);
}

/** The table bench/density prints: each kind of write, its count, its count per pod and the server's time on it. */
export function writesTable(writes: WriteCount[], pods: number): string {
  const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '-');
  const rows = [['writer', 'resource', 'verb', 'writes', 'per pod', 'server p50/p99 ms'], ...writes.map((w) => [w.writer, w.resource, w.verb, String(w.count), (w.count / pods).toFixed(2), `${ms(w.serverP50Ms)} / ${ms(w.serverP99Ms)}`])];
  const total = writes.reduce((s, w) => s + w.count, 0);
  rows.push(['total', '', '', String(total), (total / pods).toFixed(2), '']);
  const width = rows[0]!.map((_c, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i < 3 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join('  ')).join('\n');
}

/** When the server received the requests of one pod's journey (ms since the epoch). */
export interface PodRequests {
  /** The scheduler's `POST pods/<name>/binding`. */
  bind?: number;
  /** The node's first `PATCH pods/<name>/status`. */
  firstStatus?: number;
}

/**
 * Per pod name of namespace `namespace`: when the server received its binding and its first
 * status patch (the first successful one of each), from audit log `file`. Beside the times the
 * bench's watch saw the results, this splits a stage into the writer's wait before it sent the
 * request and the server's time on it plus the watch's delivery.
 */
export function podRequestTimes(file: string, namespace: string): Map<string, PodRequests> {
  const out = new Map<string, PodRequests>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const e = JSON.parse(line) as AuditLine;
    const ref = e.objectRef;
    if (ref?.resource !== 'pods' || ref.namespace !== namespace || !ref.name || (e.responseStatus?.code ?? 0) >= 400) continue;
    const at = Date.parse(e.requestReceivedTimestamp ?? '');
    const r = out.get(ref.name) ?? {};
    if (ref.subresource === 'binding') r.bind ??= at;
    else if (ref.subresource === 'status' && e.verb === 'patch') r.firstStatus ??= at;
    out.set(ref.name, r);
  }
  return out;
}
