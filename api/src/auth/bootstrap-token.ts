/**
 * Bootstrap tokens in kubeadm's format and Secret layout, shared by the API server (which
 * authenticates them) and `nodelet token create` (which makes them through the API):
 *
 *   token   <id:6>.<secret:16>, both [a-z0-9]
 *   Secret  kube-system/bootstrap-token-<id>, type bootstrap.kubernetes.io/token, data token-id,
 *           token-secret, expiration (RFC 3339), usage-bootstrap-authentication "true", and
 *           nodelet's `nodelet-node-name` when the token may only join (or re-join) that node
 *   user    system:bootstrap:<id>, group system:bootstrappers
 */
import { randomBytes } from 'node:crypto';
import { rfc3339 } from '../time.js';

export const BOOTSTRAP_TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const BOOTSTRAP_SECRET_TYPE = 'bootstrap.kubernetes.io/token';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** `length` characters of [a-z0-9], uniformly (rejection sampling: 252 = 7 × 36). */
export function randomTokenPart(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 252) out += ALPHABET[b % 36];
      if (out.length === length) break;
    }
  }
  return out;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** Secret data key naming the only node a bootstrap token may join (the admin's approval to re-join an existing node). */
export const BOOTSTRAP_NODE_NAME_KEY = 'nodelet-node-name';

/** A new bootstrap token and the Secret that makes it valid until `expiresAt` (epoch ms). */
export function newBootstrapToken(expiresAt: number, description = 'nodelet join token', nodeName?: string): { token: string; secret: { apiVersion: 'v1'; kind: 'Secret'; metadata: { name: string; namespace: string }; type: string; data: Record<string, string> } } {
  const id = randomTokenPart(6);
  const secretPart = randomTokenPart(16);
  return {
    token: `${id}.${secretPart}`,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
      type: BOOTSTRAP_SECRET_TYPE,
      data: {
        description: b64(description),
        'token-id': b64(id),
        'token-secret': b64(secretPart),
        expiration: b64(rfc3339(expiresAt)),
        'usage-bootstrap-authentication': b64('true'),
        ...(nodeName ? { [BOOTSTRAP_NODE_NAME_KEY]: b64(nodeName) } : {}),
      },
    },
  };
}
