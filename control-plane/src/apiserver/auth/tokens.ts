/**
 * Token formats and their Secret representations (kube-system); the bootstrap-token format is
 * shared with `nodelet token create` and `nodelet join`, so it lives in @nodelet/api:
 *
 * - bootstrap token `<id:6>.<secret:16>` ([a-z0-9]) → Secret `bootstrap-token-<id>`, type
 *   `bootstrap.kubernetes.io/token`, data token-id/token-secret/expiration/usage-bootstrap-authentication
 *   (kubeadm's layout) → user `system:bootstrap:<id>`, group `system:bootstrappers`.
 * - node token `node.<id:6>.<secret:32>` → Secret `nodelet-node-token-<id>`, type
 *   `nodelet.io/node-token`, data node-name + token-secret-sha256 + expiration (RFC 3339) → user
 *   `system:node:<name>`, group `system:nodes`. Only the hash is stored.
 */
import crypto, { createHash, timingSafeEqual } from 'node:crypto';
import { randomTokenPart, rfc3339 } from '@nodelet/api';

export const NODE_TOKEN_RE = /^node\.([a-z0-9]{6})\.([a-z0-9]{32})$/;
export const NODE_TOKEN_SECRET_TYPE = 'nodelet.io/node-token';
export const NODE_NAME_LABEL = 'nodelet.io/node-name';
export const NODE_TOKEN_EXPIRATION_KEY = 'expiration';

/**
 * Hex SHA-256 of `s` (UTF-8). Once per authenticated request (the token cache's key): the one-shot
 * `crypto.hash` (Node 20.12+) costs a fraction of a Hash object; older Node 20 falls back to one.
 */
export function sha256Hex(s: string): string {
  return typeof crypto.hash === 'function' ? crypto.hash('sha256', s, 'hex') : createHash('sha256').update(s).digest('hex');
}

export function equalHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export function equalStrings(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
export const unb64 = (s: unknown): string => (typeof s === 'string' ? Buffer.from(s, 'base64').toString('utf8') : '');

export function newNodeToken(nodeName: string, expiresAt?: number): { token: string; secret: Record<string, unknown> } {
  const id = randomTokenPart(6);
  const secretPart = randomTokenPart(32);
  return {
    token: `node.${id}.${secretPart}`,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `nodelet-node-token-${id}`, namespace: 'kube-system', labels: { [NODE_NAME_LABEL]: nodeName } },
      type: NODE_TOKEN_SECRET_TYPE,
      data: {
        'node-name': b64(nodeName),
        'token-secret-sha256': b64(sha256Hex(secretPart)),
        ...(expiresAt !== undefined ? { [NODE_TOKEN_EXPIRATION_KEY]: b64(rfc3339(expiresAt)) } : {}),
      },
    },
  };
}
