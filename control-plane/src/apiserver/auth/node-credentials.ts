/**
 * `POST /apis/nodelet.io/v1/nodecredentials`: exchanges a bootstrap token (or the admin token)
 * for a long-lived node credential (a bearer token for `system:node:<nodeName>`).
 *
 *   request  {"apiVersion":"nodelet.io/v1","kind":"NodeCredentialRequest","spec":{"nodeName":"node-1"}}
 *   response 201 {"kind":"NodeCredentialRequest", …, "status":{"token":"node.<id>.<secret>",
 *                 "user":"system:node:node-1","groups":["system:nodes"],"certificateAuthorityData":"<base64 PEM>"}}
 *
 * Issuing a credential for a node revokes that node's previous credentials (their Secrets are
 * deleted), so re-joining a node rotates its token. A bootstrap token is consumed by the exchange.
 */
import { isDns1123Subdomain } from '@nodelet/api';
import type { ServerContext } from '../context.js';
import { isPlainObject } from '../object.js';
import { admitCreate } from '../handlers/admit.js';
import { badRequest, invalid } from '../status.js';
import { NODE_NAME_LABEL, newNodeToken } from './tokens.js';
import type { UserInfo } from './types.js';

export const NODE_CREDENTIALS_PATH = '/apis/nodelet.io/v1/nodecredentials';

export async function issueNodeCredential(ctx: ServerContext, body: unknown, requester: UserInfo, caPem: string | undefined): Promise<Record<string, unknown>> {
  if (!isPlainObject(body) || body.kind !== 'NodeCredentialRequest' || body.apiVersion !== 'nodelet.io/v1') {
    throw badRequest('expected a nodelet.io/v1 NodeCredentialRequest');
  }
  const nodeName = (body.spec as { nodeName?: unknown } | undefined)?.nodeName;
  if (typeof nodeName !== 'string' || !isDns1123Subdomain(nodeName)) {
    throw invalid('NodeCredentialRequest', 'nodelet.io', String(nodeName ?? ''), [
      { reason: 'FieldValueInvalid', field: 'spec.nodeName', message: 'must be a DNS-1123 subdomain' },
    ]);
  }
  const secrets = ctx.resource('', 'v1', 'secrets')!;
  const { token, secret } = newNodeToken(nodeName);
  const obj = admitCreate(ctx, secrets.def, structuredClone(secret) as never);
  obj.metadata.annotations = { 'nodelet.io/issued-to': requester.name };
  // Revoke earlier credentials of this node before the new one becomes valid.
  const old = await secrets.registry.list({ namespace: 'kube-system', filter: (o) => o.metadata.labels?.[NODE_NAME_LABEL] === nodeName && o.type === secret.type });
  for (const o of old.items) await secrets.registry.remove(o).catch(() => undefined);
  await secrets.registry.create(obj);
  // A bootstrap token is single-use: once it has bought a node credential it is deleted, so a
  // leaked join command cannot mint a second node.
  const bootstrapId = /^system:bootstrap:([a-z0-9]{6})$/.exec(requester.name)?.[1];
  if (bootstrapId) {
    const used = await secrets.registry.find('kube-system', `bootstrap-token-${bootstrapId}`);
    if (used) await secrets.registry.remove(used).catch(() => undefined);
  }
  ctx.logger.info({ node: nodeName, requester: requester.name }, 'Issued node credential');
  return {
    kind: 'NodeCredentialRequest',
    apiVersion: 'nodelet.io/v1',
    metadata: { name: nodeName },
    spec: { nodeName },
    status: {
      token,
      user: `system:node:${nodeName}`,
      groups: ['system:nodes'],
      ...(caPem ? { certificateAuthorityData: Buffer.from(caPem).toString('base64') } : {}),
    },
  };
}
