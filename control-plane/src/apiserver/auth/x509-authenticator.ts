/**
 * Client-certificate authentication (kube-apiserver `--client-ca-file`): a TLS client
 * certificate that verifies against the cluster CA and is meant for client authentication
 * (extended key usage clientAuth) names the user — CN the user name, each O a group. This is
 * how `nodelet kubeconfig create --user alice --group devs` users log in.
 */
import type { TLSSocket } from 'node:tls';
import type { UserInfo } from './types.js';
import { AUTHENTICATED_GROUP } from './types.js';

const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';

/** The user of the verified client certificate on `socket`, or undefined. */
export function userFromClientCertificate(socket: TLSSocket | undefined): UserInfo | undefined {
  if (!socket || typeof socket.getPeerCertificate !== 'function' || !socket.authorized) return undefined;
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
