/**
 * Client-certificate authentication (kube-apiserver `--client-ca-file`): a TLS client
 * certificate that verifies against the cluster CA and is meant for client authentication
 * (extended key usage clientAuth) names the user — CN the user name, each O a group. This is
 * how `nodelet kubeconfig create --user alice --group devs` users log in.
 *
 * The user is worked out once per connection, not per request: `getPeerCertificate()` builds a
 * new certificate object (subject, extensions, raw DER) on every call, and a keep-alive
 * connection carries thousands of requests. That is only sound while the peer certificate cannot
 * change under the connection, so the cache applies to connections passed to
 * {@link pinClientCertificate}, which refuses TLS renegotiation on them: Node's TLS server
 * accepts a client-initiated TLS 1.2 renegotiation (up to `tls.CLIENT_RENEG_LIMIT` per window),
 * which can present another certificate, and after it Node keeps `authorized` true whatever the
 * new certificate's verification said. kube-apiserver's Go TLS server never renegotiates.
 */
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './types.js';
import { AUTHENTICATED_GROUP } from './types.js';

const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';

/** Per pinned connection: its certificate's user, or null for a certificate that names none. */
const usersByConnection = new WeakMap<TLSSocket, UserInfo | null>();
/** Connections whose peer certificate is fixed (renegotiation refused). */
const pinned = new WeakSet<TLSSocket>();

/**
 * Refuses renegotiation on a server-side TLS connection once its handshake is done (call it from
 * `secureConnection`): a client that tries it gets its connection closed
 * (`ERR_TLS_RENEGOTIATION_DISABLED`), so the certificate it presented in the handshake is the
 * one for the connection's life, and {@link userFromClientCertificate} may remember its user.
 */
export function pinClientCertificate(socket: TLSSocket): void {
  socket.disableRenegotiation();
  pinned.add(socket);
}

/** The user of the verified client certificate on `socket`, or undefined. */
export function userFromClientCertificate(socket: TLSSocket | undefined): UserInfo | undefined {
  if (!socket || typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
  if (!pinned.has(socket)) return userOf(socket);
  const known = usersByConnection.get(socket);
  if (known !== undefined) return known ?? undefined;
  const user = userOf(socket);
  usersByConnection.set(socket, user ?? null);
  return user;
}

function userOf(socket: TLSSocket): UserInfo | undefined {
  const cert = socket.getPeerCertificate();
  if (!cert || !cert.subject) return undefined;
  // A serving certificate signed by the same CA is not a login (upstream checks ExtKeyUsageClientAuth).
  if (!(cert.ext_key_usage ?? []).includes(CLIENT_AUTH_OID)) return undefined;
  const cn = cert.subject.CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  if (!name) return undefined;
  const o = cert.subject.O;
  const groups = (Array.isArray(o) ? o : o ? [o] : []).filter((g) => g !== '');
  return { name, groups: [...groups, AUTHENTICATED_GROUP] };
}
