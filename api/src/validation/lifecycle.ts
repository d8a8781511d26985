/**
 * Container lifecycle hooks (upstream core/validation validateLifecycle, validateHandler,
 * validateSleepAction): each hook names exactly one handler; exec needs a command; httpGet a port
 * (1–65535 or a port name) and scheme HTTP or HTTPS; sleep between 0 and the pod's grace period.
 * `tcpSocket` is accepted as upstream does (kept for compatibility) and fails when run.
 */
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';

type Obj = Record<string, unknown>;
const HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'sleep'] as const;
const SCHEMES = ['HTTP', 'HTTPS'];
/** IANA_SVC_NAME: 1–15 lower-case alphanumerics or '-', at least one letter, no '--', not at either end. */
const PORT_NAME = /^(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]$|^[a-z]$/;

function validatePort(port: unknown, path: string): FieldError[] {
  if (typeof port === 'number') return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : [invalidValue(path, port, 'must be between 1 and 65535, inclusive')];
  if (typeof port === 'string' && port.length <= 15 && PORT_NAME.test(port)) return [];
  if (port === undefined || port === '') return [required(path)];
  return [invalidValue(path, port, 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), at most 15 characters')];
}

function validateHandler(h: unknown, path: string, graceS: number): FieldError[] {
  if (!h || typeof h !== 'object') return [invalidValue(path, h, 'must be an object')];
  const o = h as Obj;
  const set = HANDLERS.filter((k) => o[k] !== undefined && o[k] !== null);
  if (set.length === 0) return [required(path, 'Required value: must specify a handler type')];
  if (set.length > 1) return [forbiddenField(`${path}.${set[1]}`, 'may not specify more than 1 handler type')];
  const errs: FieldError[] = [];
  const kind = set[0]!;
  const v = o[kind] as Obj;
  if (typeof v !== 'object') return [invalidValue(`${path}.${kind}`, v, 'must be an object')];
  if (kind === 'exec') {
    const cmd = v.command;
    if (!Array.isArray(cmd) || cmd.length === 0) errs.push(required(`${path}.exec.command`));
    else if (cmd.some((x) => typeof x !== 'string')) errs.push(invalidValue(`${path}.exec.command`, cmd, 'must be a list of strings'));
  } else if (kind === 'httpGet' || kind === 'tcpSocket') {
    errs.push(...validatePort(v.port, `${path}.${kind}.port`));
    if (kind === 'httpGet' && v.scheme !== undefined && !SCHEMES.includes(v.scheme as string)) errs.push(notSupported(`${path}.httpGet.scheme`, v.scheme, SCHEMES));
  } else {
    const s = v.seconds;
    if (!Number.isInteger(s) || (s as number) < 0 || (s as number) > graceS) {
      errs.push(invalidValue(`${path}.sleep.seconds`, s, `must be non-negative and less than terminationGracePeriodSeconds (${graceS})`));
    }
  }
  return errs;
}

/** `lifecycle` of one container; `graceS` is the pod's terminationGracePeriodSeconds (default 30). */
export function validateLifecycle(l: unknown, path: string, graceS: number): FieldError[] {
  if (l === undefined || l === null) return [];
  if (typeof l !== 'object') return [invalidValue(path, l, 'must be an object')];
  const o = l as Obj;
  const errs: FieldError[] = [];
  for (const hook of ['postStart', 'preStop'] as const) {
    if (o[hook] !== undefined && o[hook] !== null) errs.push(...validateHandler(o[hook], `${path}.${hook}`, graceS));
  }
  return errs;
}
