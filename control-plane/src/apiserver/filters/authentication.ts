/**
 * Authentication (kube-apiserver's WithAuthentication, union authenticator order): a client
 * certificate that verifies against the cluster CA first, then a bearer token; `401
 * Unauthorized` with neither. There is no anonymous user.
 */
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from '../auth/types.js';
import { userFromClientCertificate } from '../auth/x509-authenticator.js';
import { unauthorized } from '../status.js';
import type { Filter } from './chain.js';

export function authenticationFilter(o: {
  /** True when the server asks for client certificates (TLS with a cluster CA). */
  clientCertificates: boolean;
  /** Service-account JWTs, node and bootstrap tokens, the static tokens. */
  authenticateBearer: (token: string) => Promise<UserInfo | undefined>;
}): Filter {
  return async (r, next) => {
    r.authenticated = (o.clientCertificates ? userFromClientCertificate(r.req.socket as TLSSocket) : undefined) ?? (await bearer(r.req.headers.authorization));
    r.user = r.authenticated;
    await next();
  };

  async function bearer(header: string | undefined): Promise<UserInfo> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    const user = m ? await o.authenticateBearer(m[1]!) : undefined;
    if (!user) throw unauthorized();
    return user;
  }
}
