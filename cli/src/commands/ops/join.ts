/**
 * `nodelet join <server> --token <id.secret> --ca-cert-hash sha256:<hex>`:
 *
 *   1. read the server's CA from the TLS handshake and compare its SPKI hash with --ca-cert-hash;
 *      on mismatch abort — the token has not been sent anywhere yet;
 *   2. with that CA pinned, exchange the bootstrap token for a node credential limited to this
 *      node (POST /apis/nodelet.io/v1/nodecredentials; the server refuses unknown, expired and
 *      used tokens);
 *   3. write the cluster CA (the agent's `authentication.x509.clientCAFile`: the API server's
 *      logs/exec proxy authenticates to the agent with a client certificate of that CA), the node
 *      credential as a 0600 token file with its lifetime (the agent renews it there before it
 *      expires), and the agent kubeconfig (0600) pointing at it; then (unless --no-start) install
 *      and start the agent unit.
 *
 * Re-joining a node that already exists needs a token made for it: `nodelet token create --node-name <n>`.
 */
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname, join as joinPath } from 'node:path';
import { ApiClient, writeKubeconfig, BOOTSTRAP_TOKEN_RE, requestNodeCredential, writeCredential, writeFileAtomic, type IssuedNodeCredential } from '@nodelet/api';
import { AgentError, errCode, describeError } from '@nodelet/base';
import { fetchServerCa, parseCaCertHash, spkiHash } from './ca-pin.js';

export interface JoinOptions {
  server: string;
  token: string;
  caCertHash: string;
  nodeName?: string;
  /** Where to write the agent kubeconfig (default /etc/nodelet/agent.kubeconfig). */
  kubeconfigPath: string;
  /** Where to write the node credential (default `agent.token` beside the kubeconfig). */
  tokenFile?: string;
  /** Where to write the cluster CA (default `pki/ca.crt` beside the kubeconfig). */
  caFile?: string;
  signal?: AbortSignal;
}

export interface JoinResult {
  nodeName: string;
  kubeconfigPath: string;
  tokenFile: string;
  caFile: string;
  user: string;
  /** When the node credential expires (the agent renews it before). */
  expiresAt?: number;
}

/**
 * The agent config's node API authentication for a joined node: the API server's logs/exec proxy
 * by its client certificate (of the cluster CA in `clientCAFile`), everyone else by token
 * (TokenReview), nobody anonymously.
 */
export function agentAuthentication(clientCAFile: string): { authentication: Record<string, unknown> } {
  return { authentication: { x509: { clientCAFile }, webhook: { enabled: true }, anonymous: { enabled: false } } };
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
  const issuedAt = Date.now();
  let issued: IssuedNodeCredential;
  try {
    issued = await requestNodeCredential(bootstrap, nodeName, { signal: o.signal });
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

  // 3. CA, token file (with its lifetime), kubeconfig; each replaced atomically.
  const dir = dirname(o.kubeconfigPath);
  const caFile = o.caFile ?? joinPath(dir, 'pki', 'ca.crt');
  const tokenFile = o.tokenFile ?? joinPath(dir, 'agent.token');
  await mkdir(dirname(caFile), { recursive: true, mode: 0o755 });
  await mkdir(dirname(tokenFile), { recursive: true, mode: 0o700 });
  await writeFileAtomic(caFile, ca.pem, 0o644);
  await writeCredential({ kind: 'tokenFile', path: tokenFile }, issued.token, issued.expiresAt !== undefined ? { issuedAt, expiresAt: issued.expiresAt } : undefined);
  await writeKubeconfig(o.kubeconfigPath, { server, caData: ca.pem, tokenFile, user: issued.user, cluster: 'nodelet', context: 'nodelet' });
  return { nodeName, kubeconfigPath: o.kubeconfigPath, tokenFile, caFile, user: issued.user, ...(issued.expiresAt !== undefined ? { expiresAt: issued.expiresAt } : {}) };
}
