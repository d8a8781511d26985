/**
 * Authentication (kube-apiserver's WithAuthentication, union authenticator order): a client
 * certificate that verifies against the cluster CA first, then a bearer token in the
 * Authorization header, then (WebSocket upgrades only) a bearer token carried as a WebSocket
 * subprotocol; `401 Unauthorized` with none. There is no anonymous user.
 */
import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../auth/types.js';
import { userFromClientCertificate } from '../auth/x509-authenticator.js';
import { unauthorized } from '../status.js';
import type { Filter } from './chain.js';

/** The subprotocol prefix of a bearer token (k8s.io/apiserver …/request/websocket). */
export const BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

export function authenticationFilter(o: {
  /** True when the server asks for client certificates (TLS with a cluster CA). */
  clientCertificates: boolean;
  /** Service-account JWTs, node and bootstrap tokens, the static tokens. */
  authenticateBearer: (token: string) => Promise<UserInfo | undefined>;
}): Filter {
  return async (r, next) => {
    // Browsers cannot set headers on a WebSocket: the token rides in Sec-WebSocket-Protocol.
    // It is taken out of the request whatever authenticates it, so it is never forwarded to an
    // agent nor echoed back.
    const protocol = isWebSocketRequest(r.req) ? takeProtocolToken(r.req) : undefined;
    r.authenticated =
      (o.clientCertificates ? userFromClientCertificate(r.req.socket as TLSSocket) : undefined) ??
      (await headerBearer(r.req.headers.authorization)) ??
      (await protocolBearer(protocol));
    if (!r.authenticated) throw unauthorized();
    r.user = r.authenticated;
    await next();
  };

  async function headerBearer(header: string | undefined): Promise<UserInfo | undefined> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    return m ? await o.authenticateBearer(m[1]!) : undefined;
  }

  async function protocolBearer(p: ProtocolToken | undefined): Promise<UserInfo | undefined> {
    if (!p) return undefined;
    if ('invalid' in p) throw unauthorized();
    return await o.authenticateBearer(p.token);
  }
}

/** As wsstream.IsWebSocketRequest: `Upgrade: websocket` and an `upgrade` token in Connection. */
function isWebSocketRequest(req: IncomingMessage): boolean {
  if (String(req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return false;
  return String(req.headers.connection ?? '').toLowerCase().split(',').some((t) => t.trim() === 'upgrade');
}

type ProtocolToken = { token: string } | { invalid: string };

/**
 * The bearer token among the request's subprotocols, removed from every view of the header
 * (`headers`, `headersDistinct`, `rawHeaders`). Invalid, as upstream: two token protocols, an
 * encoding that is not unpadded base64url, bytes that are not UTF-8, or no other subprotocol left.
 */
export function takeProtocolToken(req: IncomingMessage): ProtocolToken | undefined {
  const values = req.headersDistinct['sec-websocket-protocol'];
  if (!values) return undefined;
  const kept: string[] = [];
  const tokens: string[] = [];
  for (const p of values.flatMap((v) => v.split(',')).map((s) => s.trim())) (p.startsWith(BEARER_PROTOCOL_PREFIX) ? tokens : kept).push(p);
  if (tokens.length === 0) return undefined;
  const joined = kept.join(',');
  req.headers['sec-websocket-protocol'] = joined;
  req.headersDistinct['sec-websocket-protocol'] = [joined];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === 'sec-websocket-protocol') req.rawHeaders[i + 1] = joined;
  }
  if (tokens.length > 1) return { invalid: 'multiple base64.bearer.authorization tokens specified' };
  const encoded = tokens[0]!.slice(BEARER_PROTOCOL_PREFIX.length);
  if (!/^[A-Za-z0-9_-]*$/.test(encoded) || encoded.length % 4 === 1) return { invalid: 'invalid base64.bearer.authorization token encoding' };
  let token: string;
  try {
    token = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64url'));
  } catch {
    return { invalid: 'invalid base64.bearer.authorization token' };
  }
  if (kept.length === 0) return { invalid: 'missing additional subprotocol' };
  if (token.length === 0) return undefined;
  return { token };
}
