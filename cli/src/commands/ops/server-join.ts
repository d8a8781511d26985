/**
 * Adding a server to a control plane (docs/ha.md):
 *
 *   on a server:  nodelet token create --server-join        → a server join token + CA pin
 *   on the new:   nodelet install server --join https://<first>:6443 --token … --ca-cert-hash sha256:…
 *
 *   1. read the first server's CA from the TLS handshake; refuse unless its SPKI hash is the pin
 *      (the token has not left this machine yet);
 *   2. with that CA trusted, GET the join bundle with the token (only a server join token opens it);
 *   3. check the bundle: its CA is the pinned one and its key is that CA's;
 *   4. the files for `<data-dir>` — pki/ca.crt, pki/ca.key, pki/sa.key, etcd/{ca.crt,client.crt,client.key},
 *      all 0600 — and the server flags that use them (--datastore-endpoint, --etcd-*).
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { join } from 'node:path';
import { ApiClient, loadKubeconfig, newServerJoinToken, SECRETS, SERVER_JOIN_PATH, SERVER_JOIN_TOKEN_RE, type ServerJoinBundle } from '@nodelet/api';
import { AgentError, describeError, errCode } from '@nodelet/base';
import { fetchServerCa, parseCaCertHash, spkiHash } from './ca-pin.js';

export interface CreatedServerJoinToken {
  token: string;
  expiresAt: string;
  caCertHash: string;
  server: string;
  joinCommand: string;
}

/** Creates a server join token through the admin kubeconfig (run on a server). */
export async function createServerJoinToken(o: { kubeconfig: string; ttlMs: number; description?: string; signal?: AbortSignal; now?: number }): Promise<CreatedServerJoinToken> {
  const cfg = await loadKubeconfig(o.kubeconfig);
  if (!cfg.ca) throw new AgentError('ERR_FAILED_PRECONDITION', `${o.kubeconfig} has no certificate-authority-data; use the admin kubeconfig the server wrote`);
  const client = new ApiClient(cfg);
  try {
    const expiresAt = (o.now ?? Date.now()) + o.ttlMs;
    const { token, secret } = newServerJoinToken(expiresAt, o.description);
    await client.create(SECRETS, secret as never, { signal: o.signal });
    const caCertHash = spkiHash(new X509Certificate(cfg.ca));
    return {
      token, expiresAt: new Date(expiresAt).toISOString(), caCertHash, server: cfg.server,
      joinCommand: `nodelet install server --join ${cfg.server} --token ${token} --ca-cert-hash ${caCertHash}`,
    };
  } finally {
    client.close();
  }
}

/** Steps 1–3: the verified bundle from the first server. */
export async function fetchServerJoinBundle(o: { server: string; token: string; caCertHash: string; signal?: AbortSignal }): Promise<ServerJoinBundle> {
  if (!SERVER_JOIN_TOKEN_RE.test(o.token)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', 'a server join token looks like abcdef.<32 characters of [a-z0-9]>; create one on a server with `nodelet token create --server-join`');
  }
  const want = parseCaCertHash(o.caCertHash);
  const url = new URL(/^https?:\/\//.test(o.server) ? o.server : `https://${o.server}`);
  if (url.protocol !== 'https:') throw new AgentError('ERR_INVALID_ARGUMENT', `--join needs an https address, got ${o.server}`);
  if (!url.port) url.port = '6443';
  // 1. Pin the CA before the token leaves this machine.
  const ca = await fetchServerCa(url, { signal: o.signal });
  const got = spkiHash(ca.cert);
  if (got !== want) {
    throw new AgentError('ERR_PERMISSION_DENIED', `the server's CA hash is ${got}, not ${want}: refusing to send the token (wrong server, or a man in the middle)`);
  }
  // 2. The bundle, over TLS verified against the pinned CA.
  const client = new ApiClient({ server: url.origin, ca: ca.pem, token: o.token, timeoutMs: 15_000 });
  let raw: Buffer;
  try {
    raw = await client.getRaw(SERVER_JOIN_PATH, { signal: o.signal });
  } catch (err) {
    if (errCode(err) === 'ERR_UNAUTHENTICATED') {
      throw new AgentError('ERR_UNAUTHENTICATED', 'the server refused the token (unknown or expired): create a new one with `nodelet token create --server-join`', { cause: err });
    }
    throw new AgentError(errCode(err) ?? 'ERR_UNAVAILABLE', `fetching the join bundle from ${url.origin} failed: ${describeError(err)}`, { cause: err });
  } finally {
    client.close();
  }
  // 3. The CA we will sign with is the one we pinned, and the key is its key.
  const bundle = JSON.parse(raw.toString('utf8')) as ServerJoinBundle;
  const bundleCa = new X509Certificate(bundle.caCert);
  if (spkiHash(bundleCa) !== want) throw new AgentError('ERR_PERMISSION_DENIED', 'the join bundle holds another CA than the server presents; refusing it');
  if (!bundleCa.checkPrivateKey(createPrivateKey(bundle.caKey))) throw new AgentError('ERR_FAILED_PRECONDITION', 'the join bundle\'s CA key does not belong to its CA certificate');
  if (!bundle.datastoreEndpoint) throw new AgentError('ERR_FAILED_PRECONDITION', 'the join bundle names no datastore');
  return bundle;
}

/** Step 4: files (absolute paths under `dataDir`, all 0600) and the server flags naming them. */
export function serverJoinFiles(dataDir: string, bundle: ServerJoinBundle): { files: Array<{ path: string; content: string; mode: number }>; args: string[] } {
  const pki = join(dataDir, 'pki');
  const etcd = join(dataDir, 'etcd');
  const files = [
    { path: join(pki, 'ca.crt'), content: bundle.caCert, mode: 0o600 },
    { path: join(pki, 'ca.key'), content: bundle.caKey, mode: 0o600 },
    { path: join(pki, 'sa.key'), content: bundle.serviceAccountKey, mode: 0o600 },
  ];
  const args = ['--datastore-endpoint', bundle.datastoreEndpoint];
  const etcdFile = (name: string, flag: string, content: string | undefined): void => {
    if (!content) return;
    files.push({ path: join(etcd, name), content, mode: 0o600 });
    args.push(flag, join(etcd, name));
  };
  etcdFile('ca.crt', '--etcd-cafile', bundle.etcd?.ca);
  etcdFile('client.crt', '--etcd-certfile', bundle.etcd?.cert);
  etcdFile('client.key', '--etcd-keyfile', bundle.etcd?.key);
  return { files, args };
}
