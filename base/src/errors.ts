/**
 * Stable error codes shared by every nodelet package.
 *
 * Callers classify errors with {@link hasCode}, never by message text and never with
 * `instanceof` across package boundaries (two copies of this package may be loaded).
 * Each boundary (gRPC, CNI, HTTP) translates its native errors into these codes once.
 */
export type ErrorCode =
  | 'ERR_NOT_FOUND'
  | 'ERR_ALREADY_EXISTS'
  | 'ERR_CONFLICT'
  | 'ERR_INVALID_ARGUMENT'
  | 'ERR_FAILED_PRECONDITION'
  | 'ERR_UNAVAILABLE'
  | 'ERR_DEADLINE_EXCEEDED'
  | 'ERR_UNIMPLEMENTED'
  | 'ERR_PERMISSION_DENIED'
  | 'ERR_UNAUTHENTICATED'
  | 'ERR_RESOURCE_EXHAUSTED'
  | 'ERR_GONE'
  | 'ERR_INTERNAL'
  | 'ERR_NETWORK_NOT_READY'
  | 'ERR_IMAGE_PULL_BACKOFF'
  | 'ERR_CRASH_LOOP_BACKOFF';

const BRAND = Symbol.for('nodelet.AgentError');

export interface AgentErrorOptions {
  cause?: unknown;
  /** Whether retrying the same operation later may succeed. Defaults by code. */
  retryable?: boolean;
}

const RETRYABLE_BY_DEFAULT: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'ERR_UNAVAILABLE',
  'ERR_DEADLINE_EXCEEDED',
  'ERR_CONFLICT',
  'ERR_RESOURCE_EXHAUSTED',
  'ERR_NETWORK_NOT_READY',
  'ERR_IMAGE_PULL_BACKOFF',
  'ERR_CRASH_LOOP_BACKOFF',
]);

/** The one error class of nodelet. Subclass only to carry extra data (e.g. `CniError.cniCode`). */
export class AgentError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AgentError';
    this.code = code;
    this.retryable = options.retryable ?? RETRYABLE_BY_DEFAULT.has(code);
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/** True when `err` (or an AgentError from another copy of this package) carries `code`. */
export function hasCode(err: unknown, code: ErrorCode): boolean {
  return errCode(err) === code;
}

/**
 * `p`'s value, or undefined when it fails with ERR_NOT_FOUND (an object that is not there is an
 * answer, not a failure); every other error propagates.
 */
export async function unlessNotFound<T>(p: Promise<T>): Promise<T | undefined> {
  try {
    return await p;
  } catch (err) {
    if (hasCode(err, 'ERR_NOT_FOUND')) return undefined;
    throw err;
  }
}

/** The stable code of `err`, or undefined for foreign errors. */
export function errCode(err: unknown): ErrorCode | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  if (!(BRAND in err)) return undefined;
  return (err as { code?: ErrorCode }).code;
}

export function isAgentError(err: unknown): err is AgentError {
  return typeof err === 'object' && err !== null && BRAND in err;
}

/** True for the platform's cancellation error (`AbortSignal.abort()`, `signal.throwIfAborted()`). */
export function isAbortError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { name?: string }).name === 'AbortError';
}

/** Creates the platform AbortError (a DOMException), as `fetch` and timers/promises throw. */
export function abortError(reason?: unknown): Error {
  const e = new DOMException('the operation was aborted', 'AbortError');
  if (reason !== undefined) Object.defineProperty(e, 'cause', { value: reason });
  return e as unknown as Error;
}

/** A short, single-line description of any thrown value, for CLI output and Status messages. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
