/**
 * The audit.k8s.io/v1 `Event` as written to the audit log, one JSON line each, and the pieces of
 * it that come from the HTTP request (source IPs, user agent, timestamps).
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import type { UserInfo } from '../auth/types.js';
import type { AuditLevel, AuditStage } from './policy.js';

/** authentication.k8s.io/v1 UserInfo as the event carries it. */
export interface AuditUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AuditObjectRef {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

/** metav1.Status as the event carries it: the code always, the rest when the reply was a Status. */
export interface AuditResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

/** Field order follows upstream's JSON so that lines read the same as kube-apiserver's. */
export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: AuditLevel;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: AuditUser;
  impersonatedUser?: AuditUser;
  sourceIPs: string[];
  userAgent?: string;
  objectRef?: AuditObjectRef;
  responseStatus?: AuditResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

/** Upstream cuts longer User-Agent headers to this many bytes and marks the cut. */
const MAX_USER_AGENT = 1024;

export function auditUser(u: UserInfo): AuditUser {
  return {
    username: u.name,
    ...(u.uid ? { uid: u.uid } : {}),
    groups: [...u.groups],
    ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: Object.fromEntries(Object.entries(u.extra).map(([k, v]) => [k, [...v]])) } : {}),
  };
}

export function userAgentOf(req: IncomingMessage): string | undefined {
  const ua = req.headers['user-agent'];
  if (!ua) return undefined;
  return ua.length > MAX_USER_AGENT ? `${ua.slice(0, MAX_USER_AGENT)}...TRUNCATED` : ua;
}

/**
 * The client's addresses as upstream lists them: X-Forwarded-For entries, then X-Real-Ip, then
 * the connection's peer unless it is already last. The headers are the client's word (a proxy's
 * or anyone's); only the peer address is the server's own observation.
 */
export function sourceIPsOf(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const xff = req.headers['x-forwarded-for'];
  for (const part of (Array.isArray(xff) ? xff.join(',') : xff ?? '').split(',')) {
    const ip = part.trim();
    if (isIP(ip)) ips.push(ip);
  }
  const realIp = String(req.headers['x-real-ip'] ?? '').trim();
  if (isIP(realIp) && !ips.includes(realIp)) ips.push(realIp);
  const peer = (req.socket.remoteAddress ?? '').replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/, '');
  if (peer && ips[ips.length - 1] !== peer) ips.push(peer);
  return ips;
}

/** Now in microseconds since the epoch (metav1.MicroTime's precision). */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** metav1.MicroTime's wire form: RFC 3339 in UTC with six fractional digits. */
export function microTime(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString(); // …T12:34:56.789Z
  return `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z`;
}
