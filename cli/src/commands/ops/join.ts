/**
 * `nodelet join <server> --token <id.secret> --ca-cert-hash sha256:<hex>`:
 *
 *   1. read the server's CA from the TLS handshake and compare its SPKI hash with --ca-cert-hash;
 *      on mismatch abort — the token has not been sent anywhere yet;
 *   2. with that CA pinned, exchange the bootstrap token for a node credential limited to this
 *      node (POST /apis/nodelet.io/v1/nodecredentials; the server refuses unknown, expired and
 *      used tokens);
 *   3. write the agent kubeconfig 0600 and (unless --no-start) install and start the agent unit.
 */
import { hostname } from 'node:os';
import { ApiClient, writeKubeconfig, BOOTSTRAP_TOKEN_RE, type KubeObject, type ResourceType } from '@nodelet/api';
import { AgentError, errCode, describeError } from '@nodelet/base';
import { fetchServerCa, parseCaCertHash, spkiHash } from './ca-pin.js';

/** The server's credential exchange, `POST /apis/nodelet.io/v1/nodecredentials` (control-plane auth/node-credentials.ts). */
interface NodeCredentialRequest extends KubeObject {
  spec: { nodeName: string };
  status?: { token?: string; user?: string };
}
const NODE_CREDENTIALS: ResourceType<NodeCredentialRequest> = Object.freeze({
  group: 'nodelet.io', version: 'v1', kind: 'NodeCredentialRequest', plural: 'nodecredentials', singular: 'nodecredential', namespaced: false,
});

export interface JoinOptions {
  server: string;
  token: string;
  caCertHash: string;
  nodeName?: string;
  /** Where to write the agent kubeconfig (default /etc/nodelet/agent.kubeconfig). */
  kubeconfigPath: string;
  signal?: AbortSignal;
}

export interface JoinResult {
  nodeName: string;
  kubeconfigPath: string;
  user: string;
}

function serverUrl(s: string): URL {
  const withScheme = /^https?:\/\//.test(s) ? s : `https://${s}`;
  const u = new URL(withScheme);
  if (u.protocol !== 'https:') throw new AgentError('ERR_INVALID_ARGUMENT', `join needs an https server address, got ${s}`);
  if (!u.port) u.port = '6443';
  return u;
}

export async function join(o: JoinOptions): Promise<JoinResult> {
  if (!BOOTSTRAP_TOKEN_RE.test(o.token)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'the token must look like abcdef.0123456789abcdef (6 and 16 characters of [a-z0-9]); create one on the server with `nodelet token create`');
  }
  const want = parseCaCertHash(o.caCertHash);
  const url = serverUrl(o.server);
  const nodeName = (o.nodeName ?? hostname()).toLowerCase();

  // 1. Pin the CA before anything secret leaves this machine.
  const ca = await fetchServerCa(url, { signal: o.signal });
  const got = spkiHash(ca.cert);
  if (got !== want) {
    throw new AgentError('ERR_PERMISSION_DENIED', `the server's CA hash is ${got}, not ${want}: refusing to send the token (wrong server, or a man in the middle); check the hash printed by \`nodelet token create\``);
  }

  // 2. Exchange the bootstrap token for this node's credential.
  const server = url.origin;
  const bootstrap = new ApiClient({ server, ca: ca.pem, token: o.token, timeoutMs: 15_000 });
  let reply: NodeCredentialRequest;
  try {
    reply = await bootstrap.create(NODE_CREDENTIALS, { metadata: {}, spec: { nodeName } }, { signal: o.signal });
  } catch (err) {
    const code = errCode(err);
    if (code === 'ERR_UNAUTHENTICATED') {
      throw new AgentError('ERR_UNAUTHENTICATED', `the server refused the token (unknown, expired or already used): create a new one on the server with \`nodelet token create\``, { cause: err });
    }
    if (code === 'ERR_UNAVAILABLE') throw new AgentError('ERR_UNAVAILABLE', `cannot reach the server at ${server}: ${describeError(err)}`, { cause: err });
    throw err;
  } finally {
    bootstrap.close();
  }
  const nodeToken = reply.status?.token;
  if (!nodeToken) throw new AgentError('ERR_INTERNAL', 'the server answered the credential request without a token');

  // 3. The agent's kubeconfig, 0600 (writeKubeconfig refuses wider modes).
  await writeKubeconfig(o.kubeconfigPath, { server, caData: ca.pem, token: nodeToken, user: reply.status?.user ?? `system:node:${nodeName}`, cluster: 'nodelet', context: 'nodelet' });
  return { nodeName, kubeconfigPath: o.kubeconfigPath, user: reply.status?.user ?? `system:node:${nodeName}` };
}
