/**
 * Token formats and their Secret representations (kube-system):
 *
 * - bootstrap token `<id:6>.<secret:16>` ([a-z0-9]) → Secret `bootstrap-token-<id>`, type
 *   `bootstrap.kubernetes.io/token`, data token-id/token-secret/expiration/usage-bootstrap-authentication
 *   (kubeadm's layout) → user `system:bootstrap:<id>`, group `system:bootstrappers`.
 * - node token `node.<id:6>.<secret:32>` → Secret `nodelet-node-token-<id>`, type
 *   `nodelet.io/node-token`, data node-name + token-secret-sha256 → user `system:node:<name>`,
 *   group `system:nodes`. Only the hash is stored.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export const BOOTSTRAP_TOKEN_RE = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
export const NODE_TOKEN_RE = /^node\.([a-z0-9]{6})\.([a-z0-9]{32})$/;
export const BOOTSTRAP_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
export const NODE_TOKEN_SECRET_TYPE = 'nodelet.io/node-token';
export const NODE_NAME_LABEL = 'nodelet.io/node-name';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function randomTokenPart(length: number): string {
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length; i++) {
    const b = bytes[i % bytes.length]!;
    // Rejection sampling keeps the alphabet uniform (252 = 7 * 36).
    if (b < 252) out += ALPHABET[b % 36];
    if (i > length * 8) break;
  }
  return out.padEnd(length, 'a');
}

export function sha256Hex(s: string): string {
  return createHash('sha256').update(s).digest('hex');
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

/** A new bootstrap token and the Secret that makes it valid until `expiresAt` (epoch ms). */
export function newBootstrapToken(expiresAt: number, description = 'nodelet join token'): { token: string; secret: Record<string, unknown> } {
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
        expiration: b64(new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z')),
        'usage-bootstrap-authentication': b64('true'),
        'usage-bootstrap-signing': b64('true'),
      },
    },
  };
}

export function newNodeToken(nodeName: string): { token: string; secret: Record<string, unknown> } {
  const id = randomTokenPart(6);
  const secretPart = randomTokenPart(32);
  return {
    token: `node.${id}.${secretPart}`,
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `nodelet-node-token-${id}`, namespace: 'kube-system', labels: { [NODE_NAME_LABEL]: nodeName } },
      type: NODE_TOKEN_SECRET_TYPE,
      data: { 'node-name': b64(nodeName), 'token-secret-sha256': b64(sha256Hex(secretPart)) },
    },
  };
}
