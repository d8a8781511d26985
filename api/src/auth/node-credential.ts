/**
 * nodelet's node credentials, `POST /apis/nodelet.io/v1/nodecredentials` (the control plane's
 * auth/node-credentials.ts): a bearer token for `system:node:<name>` (group `system:nodes`) with
 * an expiry. `nodelet join` exchanges a bootstrap token for the first one; the agent renews its
 * own with its current token before it expires (the old one keeps working for 10 minutes).
 *
 *   request  {"apiVersion":"nodelet.io/v1","kind":"NodeCredentialRequest","spec":{"nodeName":"node-1"}}
 *   response {…,"status":{"token":"node.<id>.<secret>","user":"system:node:node-1","groups":["system:nodes"],
 *             "expirationTimestamp":"2027-01-01T00:00:00Z","certificateAuthorityData":"<base64 PEM>"}}
 */
import { AgentError } from '@nodelet/base';
import type { ApiClient } from '../client/api-client.js';
import type { KubeObject } from '../types/meta.js';
import type { ResourceType } from '../types/resources.js';

export interface NodeCredentialRequest extends KubeObject {
  spec: { nodeName: string };
  status?: { token?: string; user?: string; groups?: string[]; expirationTimestamp?: string; certificateAuthorityData?: string };
}

export const NODE_CREDENTIALS: ResourceType<NodeCredentialRequest> = Object.freeze({
  group: 'nodelet.io', version: 'v1', kind: 'NodeCredentialRequest', plural: 'nodecredentials', singular: 'nodecredential', namespaced: false,
});

/** A credential the server issued. */
export interface IssuedNodeCredential {
  token: string;
  user: string;
  /** When the server stops accepting it (epoch ms); undefined when the server gave no expiry. */
  expiresAt?: number;
  /** The cluster CA (PEM), when the server sent it. */
  caPem?: string;
}

/**
 * Asks for a credential for `nodeName` with whatever `api` authenticates as (a bootstrap token,
 * the node's current credential, an admin). Errors are the client's AgentErrors (401 →
 * ERR_UNAUTHENTICATED, 403 → ERR_PERMISSION_DENIED); a reply without a token is ERR_INTERNAL.
 */
export async function requestNodeCredential(api: ApiClient, nodeName: string, o: { signal?: AbortSignal } = {}): Promise<IssuedNodeCredential> {
  const reply = await api.create(NODE_CREDENTIALS, { metadata: {}, spec: { nodeName } }, { signal: o.signal });
  const s = reply.status ?? {};
  if (!s.token) throw new AgentError('ERR_INTERNAL', `the server answered the credential request for node "${nodeName}" without a token`);
  const expiresAt = s.expirationTimestamp ? Date.parse(s.expirationTimestamp) : NaN;
  return {
    token: s.token,
    user: s.user ?? `system:node:${nodeName}`,
    ...(Number.isFinite(expiresAt) ? { expiresAt } : {}),
    ...(s.certificateAuthorityData ? { caPem: Buffer.from(s.certificateAuthorityData, 'base64').toString('utf8') } : {}),
  };
}
