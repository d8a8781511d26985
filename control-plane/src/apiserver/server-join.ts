/**
 * GET /nodelet/v1/server-join-bundle: the cluster's shared secrets for a server joining the
 * control plane (`nodelet install server --join`, docs/ha.md). Authorised by a server join token
 * (api auth/server-join.ts) and nothing else: the token is checked here against its Secret
 * (type nodelet.io/server-join-token, unexpired, secret compared in constant time), and no other
 * credential — not even the admin's — opens this door, so the CA key leaves only to a holder of
 * a token made for this. Any failure is the same 401, so the answer tells nothing about tokens.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SERVER_JOIN_SECRET_TYPE, SERVER_JOIN_TOKEN_RE, type ServerJoinBundle } from '@nodelet/api';
import type { ServerContext } from './context.js';
import type { Json } from './object.js';
import { sendJson } from './respond.js';
import { StatusError } from './status.js';
import { equalStrings } from './auth/tokens.js';

const unb64 = (v: unknown): string => (typeof v === 'string' ? Buffer.from(v, 'base64').toString('utf8') : '');

/** Answers the request; throws StatusError (401, 404, 405) for the request edge to write. */
export async function serveServerJoinBundle(ctx: ServerContext, req: IncomingMessage, res: ServerResponse, bundle: (() => Promise<ServerJoinBundle>) | undefined): Promise<void> {
  if (req.method !== 'GET') throw new StatusError(405, 'MethodNotAllowed', 'only GET is allowed here');
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  const parts = m ? SERVER_JOIN_TOKEN_RE.exec(m[1]!) : null;
  const unauthorized = (): StatusError => new StatusError(401, 'Unauthorized', 'a valid server join token is required (create one on a server with `nodelet token create --server-join`)');
  if (!parts) throw unauthorized();
  const [, id, secretPart] = parts;
  const secret = await ctx.resource('', 'v1', 'secrets')!.registry.find('kube-system', `server-join-token-${id}`);
  const data = (secret?.data ?? {}) as Json;
  const expiration = Date.parse(unb64(data.expiration));
  if (!secret || secret.type !== SERVER_JOIN_SECRET_TYPE || secret.metadata.deletionTimestamp || unb64(data['token-id']) !== id
    || !equalStrings(unb64(data['token-secret']), secretPart!) || !(expiration > ctx.now())) throw unauthorized();
  if (!bundle) throw new StatusError(404, 'NotFound', 'this server stores its state in SQLite, which only it can use; servers share a control plane through etcd (--datastore-endpoint etcd://…)');
  ctx.logger.info({ tokenId: id, remote: req.socket.remoteAddress }, 'Handed out the server join bundle');
  sendJson(res, 200, await bundle());
}
