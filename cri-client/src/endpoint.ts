import { AgentError } from '@nodelet/base';

/** A parsed CRI endpoint. Only unix sockets are supported, as for the kubelet on Linux. */
export interface CriEndpoint {
  /** Normalised form, `unix:///abs/path.sock`, used in messages and as the gRPC target. */
  url: string;
  socketPath: string;
}

/** Accepts `unix:///path`, `unix:/path` or a bare absolute path. */
export function parseEndpoint(endpoint: string): CriEndpoint {
  const e = endpoint.trim();
  let path: string | undefined;
  if (e.startsWith('unix://')) path = e.slice('unix://'.length);
  else if (e.startsWith('unix:')) path = e.slice('unix:'.length);
  else if (e.startsWith('/')) path = e;
  if (path === undefined) {
    const scheme = /^([a-z0-9+.-]+):/i.exec(e)?.[1];
    throw new AgentError(
      'ERR_INVALID_ARGUMENT',
      scheme
        ? `unsupported CRI endpoint "${endpoint}": scheme "${scheme}" is not supported, use unix:///path/to/socket`
        : `invalid CRI endpoint "${endpoint}": expected unix:///path/to/socket`,
    );
  }
  if (!path.startsWith('/')) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `invalid CRI endpoint "${endpoint}": the socket path must be absolute (unix:///path/to/socket)`);
  }
  return { url: `unix://${path}`, socketPath: path };
}
