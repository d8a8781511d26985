import { AgentError, type ErrorCode } from '@nodelet/base';

/** Error codes of the CNI spec (SPEC.md §5 "Error") plus the two libcni adds. */
export const CniCode = {
  IncompatibleVersion: 1,
  UnsupportedField: 2,
  UnknownContainer: 3,
  InvalidEnvironment: 4,
  IOFailure: 5,
  DecodingFailure: 6,
  InvalidNetworkConfig: 7,
  InvalidNetNS: 8,
  TryAgainLater: 11,
  PluginNotAvailable: 50,
  PluginNotAvailableLimitedConnectivity: 51,
  Internal: 999,
} as const;

/** The spec's error object, as plugins print it on stdout (cniVersion is optional in practice). */
export interface CniErrorJSON {
  cniVersion?: string;
  code: number;
  msg: string;
  details?: string;
}

export interface CniErrorInit {
  cniCode: number;
  msg: string;
  details?: string;
  /** The plugin type (binary name) that failed, when a plugin is to blame. */
  plugin?: string;
  /** Overrides the nodelet code derived from cniCode (e.g. ERR_DEADLINE_EXCEEDED for a timeout). */
  code?: ErrorCode;
  retryable?: boolean;
  cause?: unknown;
}

function codeFor(cniCode: number): ErrorCode {
  switch (cniCode) {
    case CniCode.IncompatibleVersion:
      return 'ERR_FAILED_PRECONDITION';
    case CniCode.UnsupportedField:
    case CniCode.InvalidEnvironment:
    case CniCode.DecodingFailure:
    case CniCode.InvalidNetworkConfig:
    case CniCode.InvalidNetNS:
      return 'ERR_INVALID_ARGUMENT';
    case CniCode.UnknownContainer:
      return 'ERR_NOT_FOUND';
    case CniCode.TryAgainLater:
      return 'ERR_UNAVAILABLE';
    case CniCode.PluginNotAvailable:
    case CniCode.PluginNotAvailableLimitedConnectivity:
      return 'ERR_NETWORK_NOT_READY';
    default:
      return 'ERR_INTERNAL';
  }
}

/**
 * A CNI failure, translated once at the exec boundary: the spec's code/msg/details plus the
 * plugin that produced it. Spec code 11 ("try again later") is retryable.
 */
export class CniError extends AgentError {
  readonly cniCode: number;
  readonly msg: string;
  readonly details: string | undefined;
  readonly plugin: string | undefined;

  constructor(init: CniErrorInit) {
    const where = init.plugin ? `plugin "${init.plugin}": ` : '';
    const details = init.details ? `: ${init.details}` : '';
    super(init.code ?? codeFor(init.cniCode), `${where}${init.msg}${details}`, {
      cause: init.cause,
      retryable: init.retryable ?? (init.cniCode === CniCode.TryAgainLater || undefined),
    });
    this.name = 'CniError';
    this.cniCode = init.cniCode;
    this.msg = init.msg;
    this.details = init.details;
    this.plugin = init.plugin;
  }

  /** The spec error object, for printing by `nodelet-cni` and `nodelet cni`. */
  toSpecJSON(cniVersion?: string): CniErrorJSON {
    const out: CniErrorJSON = { ...(cniVersion ? { cniVersion } : {}), code: this.cniCode, msg: this.plugin ? `${this.plugin}: ${this.msg}` : this.msg };
    if (this.details) out.details = this.details;
    return out;
  }
}

export function isCniError(err: unknown): err is CniError {
  return err instanceof CniError;
}

/** Any thrown value as a spec error object (code 999 for non-CNI failures). */
export function toSpecError(err: unknown, cniVersion?: string): CniErrorJSON {
  if (err instanceof CniError) return err.toSpecJSON(cniVersion);
  const msg = err instanceof Error ? err.message : String(err);
  return cniVersion ? { cniVersion, code: CniCode.Internal, msg } : { code: CniCode.Internal, msg };
}
