/**
 * Server join tokens: what `nodelet install server --join` shows the first server to fetch the
 * cluster's shared secrets (docs/ha.md). A token of its own kind, so that it authorises exactly
 * this one read and nothing else (the API's authenticator does not know it):
 *
 *   token   <id:6>.<secret:32>, [a-z0-9] (longer than a bootstrap token: it unlocks the CA key)
 *   Secret  kube-system/server-join-token-<id>, type nodelet.io/server-join-token, data token-id,
 *           token-secret, expiration (RFC 3339), description
 *   use     GET {@link SERVER_JOIN_PATH} with `Authorization: Bearer <token>`, over TLS whose CA
 *           the joiner pinned by hash first (cli ops/ca-pin.ts)
 */
import { rfc3339 } from '../time.js';
import { randomTokenPart } from './bootstrap-token.js';

export const SERVER_JOIN_TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{32})$/;
export const SERVER_JOIN_SECRET_TYPE = 'nodelet.io/server-join-token';
export const SERVER_JOIN_PATH = '/nodelet/v1/server-join-bundle';

/** What the first server hands a joining one: every secret the servers of a cluster share. */
export interface ServerJoinBundle {
  /** The cluster CA (PEM) and its key: the new server issues its own serving certificate with them. */
  caCert: string;
  caKey: string;
  /** The service-account signing key (PKCS#8 PEM): tokens issued by one server verify on all. */
  serviceAccountKey: string;
  /** The first server's --datastore-endpoint (always etcd). */
  datastoreEndpoint: string;
  /** Its etcd TLS files' contents (--etcd-cafile, --etcd-certfile, --etcd-keyfile), when it uses them. */
  etcd?: { ca?: string; cert?: string; key?: string };
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** A new server join token and the Secret that makes it valid until `expiresAt` (epoch ms). */
export function newServerJoinToken(expiresAt: number, description = 'nodelet server join token'): { token: string; secret: { apiVersion: 'v1'; kind: 'Secret'; metadata: { name: string; namespace: string }; type: string; data: Record<string, string> } } {
  const id = randomTokenPart(6);
  const secretPart = randomTokenPart(32);
  return {
    token: `${id}.${secretPart}`,
    secret: {
      apiVersion: 'v1', kind: 'Secret',
      metadata: { name: `server-join-token-${id}`, namespace: 'kube-system' },
      type: SERVER_JOIN_SECRET_TYPE,
      data: { description: b64(description), 'token-id': b64(id), 'token-secret': b64(secretPart), expiration: b64(rfc3339(expiresAt)) },
    },
  };
}
