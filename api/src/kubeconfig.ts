/**
 * kubeconfig files (the `clientcmd` v1 format kubectl reads): load the current context into
 * ApiClient options, and write one for an admin or a joining node. Only the fields nodelet needs:
 * `exec` and `auth-provider` users are rejected with a clear message.
 */
import { mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { AgentError } from '@nodelet/base';
import type { TransportOptions } from './client/transport.js';
import { writeFileAtomic } from './fs-atomic.js';

/** What `loadKubeconfig` resolves: usable directly as `new ApiClient(cfg)`. */
export interface ResolvedKubeconfig extends TransportOptions {
  server: string;
  /** The context, cluster and user names that were picked. */
  context: string;
  cluster: string;
  user: string;
  /** The context's default namespace (`default` when unset). */
  namespace: string;
  /**
   * Every API server of an HA control plane when the cluster carries the
   * {@link SERVERS_EXTENSION} extension (`server` first); ApiClient fails over between them.
   */
  servers?: string[];
}

/**
 * Name of the cluster extension that lists several API servers. A kubeconfig cluster has one
 * `server`; kubectl keeps using it and ignores extensions it does not know, while nodelet's
 * clients (agent, CLI) read the list and fail over (docs/ha.md "Agent fail-over"):
 *
 *     cluster:
 *       server: https://10.0.0.1:6443
 *       extensions:
 *       - name: nodelet.io/servers
 *         extension: { servers: [https://10.0.0.1:6443, https://10.0.0.2:6443] }
 */
export const SERVERS_EXTENSION = 'nodelet.io/servers';

interface RawCluster {
  server?: string;
  'certificate-authority'?: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  extensions?: unknown;
}

interface RawUser {
  token?: string;
  tokenFile?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  exec?: unknown;
  'auth-provider'?: unknown;
  username?: string;
}

interface RawContext {
  cluster?: string;
  user?: string;
  namespace?: string;
}

function invalid(source: string, why: string): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `kubeconfig ${source}: ${why}`);
}

function findNamed<T>(list: unknown, key: string, name: string, source: string): T {
  if (!Array.isArray(list)) throw invalid(source, `no "${key}s" list`);
  const entry = (list as Array<Record<string, unknown> | null>).find((e) => e?.name === name);
  if (!entry) throw invalid(source, `${key} "${name}" not found`);
  const value = entry[key];
  if (typeof value !== 'object' || value === null) throw invalid(source, `${key} "${name}" has no "${key}" section`);
  return value as T;
}

/** The path kubectl would use: the first entry of $KUBECONFIG, else ~/.kube/config. */
export function defaultKubeconfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const first = env.KUBECONFIG?.split(':').find((p) => p !== '');
  return first ?? join(homedir(), '.kube', 'config');
}

export interface ParseKubeconfigOptions {
  /** Directory relative file paths are resolved against (the kubeconfig's own directory). */
  baseDir: string;
  /** Overrides `current-context`. */
  context?: string;
  /** Names the source in error messages. */
  source?: string;
}

/**
 * Resolves the chosen context of a kubeconfig document. File references
 * (`certificate-authority`, `client-certificate`, `client-key`) are read; `tokenFile` is passed
 * on so the client re-reads rotated tokens.
 */
export async function parseKubeconfig(text: string, o: ParseKubeconfigOptions): Promise<ResolvedKubeconfig> {
  const source = o.source ?? '(inline)';
  let doc: Record<string, unknown>;
  try {
    doc = (parse(text) ?? {}) as Record<string, unknown>;
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `kubeconfig ${source}: not valid YAML`, { cause: err });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw invalid(source, 'not a mapping');
  const contextName = o.context ?? (doc['current-context'] as string | undefined);
  if (!contextName) throw invalid(source, 'no current-context set; pass a context name');
  const ctx = findNamed<RawContext>(doc.contexts, 'context', contextName, source);
  if (!ctx.cluster) throw invalid(source, `context "${contextName}" names no cluster`);
  const cluster = findNamed<RawCluster>(doc.clusters, 'cluster', ctx.cluster, source);
  const user: RawUser = ctx.user ? findNamed<RawUser>(doc.users, 'user', ctx.user, source) : {};
  if (!cluster.server) throw invalid(source, `cluster "${ctx.cluster}" has no server`);
  if (user.exec !== undefined || user['auth-provider'] !== undefined) {
    throw invalid(source, `user "${ctx.user}" uses exec/auth-provider credentials, which nodelet does not support; use a token or client certificate`);
  }
  const path = (p: string): string => (isAbsolute(p) ? p : resolve(o.baseDir, p));
  const readRef = async (what: string, file: string): Promise<Buffer> => {
    try {
      return await readFile(path(file));
    } catch (err) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `kubeconfig ${source}: cannot read ${what} "${path(file)}"`, { cause: err });
    }
  };
  const b64 = (v: string): Buffer => Buffer.from(v, 'base64');

  const out: ResolvedKubeconfig = {
    server: cluster.server,
    context: contextName,
    cluster: ctx.cluster,
    user: ctx.user ?? '',
    namespace: ctx.namespace || 'default',
  };
  const servers = serversExtension(cluster, ctx.cluster, source);
  if (servers) out.servers = [...new Set([cluster.server, ...servers])];
  if (cluster['certificate-authority-data']) out.ca = b64(cluster['certificate-authority-data']);
  else if (cluster['certificate-authority']) out.ca = await readRef('certificate-authority', cluster['certificate-authority']);
  if (cluster['insecure-skip-tls-verify']) out.insecureSkipTlsVerify = true;
  if (user.token) out.token = user.token;
  else if (user.tokenFile) out.tokenFile = path(user.tokenFile);
  if (user['client-certificate-data']) out.cert = b64(user['client-certificate-data']);
  else if (user['client-certificate']) out.cert = await readRef('client-certificate', user['client-certificate']);
  if (user['client-key-data']) out.key = b64(user['client-key-data']);
  else if (user['client-key']) out.key = await readRef('client-key', user['client-key']);
  if ((out.cert === undefined) !== (out.key === undefined)) {
    throw invalid(source, `user "${ctx.user}" needs both a client certificate and a client key`);
  }
  return out;
}

/** The URLs of the {@link SERVERS_EXTENSION} extension of a cluster, checked; undefined without it. */
function serversExtension(cluster: RawCluster, name: string, source: string): string[] | undefined {
  if (cluster.extensions === undefined) return undefined;
  if (!Array.isArray(cluster.extensions)) throw invalid(source, `cluster "${name}": extensions must be a list`);
  const entry = (cluster.extensions as Array<{ name?: unknown; extension?: unknown } | null>).find((e) => e?.name === SERVERS_EXTENSION);
  if (!entry) return undefined;
  const list = (entry.extension as { servers?: unknown } | null)?.servers;
  if (!Array.isArray(list) || list.length === 0) throw invalid(source, `cluster "${name}": extension ${SERVERS_EXTENSION} needs a non-empty "servers" list`);
  for (const url of list) {
    if (typeof url !== 'string' || !/^https?:\/\/[^/]/.test(url)) throw invalid(source, `cluster "${name}": extension ${SERVERS_EXTENSION} lists "${String(url)}", not an http(s):// URL`);
  }
  return list as string[];
}

/** Reads and resolves a kubeconfig file (default: {@link defaultKubeconfigPath}). */
export async function loadKubeconfig(file: string = defaultKubeconfigPath(), o: { context?: string } = {}): Promise<ResolvedKubeconfig> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new AgentError('ERR_NOT_FOUND', `cannot read kubeconfig "${file}"; pass --kubeconfig or set KUBECONFIG`, { cause: err });
  }
  return parseKubeconfig(text, { baseDir: dirname(resolve(file)), context: o.context, source: `"${file}"` });
}

export interface KubeconfigSpec {
  server: string;
  /** Every API server (HA); written as the {@link SERVERS_EXTENSION} extension when more than `server`. */
  servers?: readonly string[];
  /** PEM of the CA that signs the server certificate (embedded as certificate-authority-data). */
  caData?: string | Buffer;
  token?: string;
  /** File holding the bearer token (`tokenFile`, re-read by clients, replaced when the token rotates). */
  tokenFile?: string;
  /** PEM client certificate and key (embedded as client-certificate-data / client-key-data). */
  clientCertificateData?: string | Buffer;
  clientKeyData?: string | Buffer;
  insecureSkipTlsVerify?: boolean;
  /** Names of the user, cluster and context entries (defaults: admin, nodelet, nodelet). */
  user?: string;
  cluster?: string;
  context?: string;
  namespace?: string;
}

/** The kubeconfig YAML for one cluster/user/context, with credentials embedded. */
export function formatKubeconfig(s: KubeconfigSpec): string {
  const cluster = s.cluster ?? 'nodelet';
  const user = s.user ?? 'admin';
  const context = s.context ?? 'nodelet';
  const enc = (v: string | Buffer): string => Buffer.from(v).toString('base64');
  const clusterBody: Record<string, unknown> = { server: s.server };
  if (s.caData !== undefined) clusterBody['certificate-authority-data'] = enc(s.caData);
  if (s.insecureSkipTlsVerify) clusterBody['insecure-skip-tls-verify'] = true;
  const servers = [...new Set([s.server, ...(s.servers ?? [])])];
  if (servers.length > 1) clusterBody.extensions = [{ name: SERVERS_EXTENSION, extension: { servers } }];
  const userBody: Record<string, unknown> = {};
  if (s.token !== undefined) userBody.token = s.token;
  if (s.tokenFile !== undefined) userBody.tokenFile = s.tokenFile;
  if (s.clientCertificateData !== undefined) userBody['client-certificate-data'] = enc(s.clientCertificateData);
  if (s.clientKeyData !== undefined) userBody['client-key-data'] = enc(s.clientKeyData);
  const contextBody: Record<string, unknown> = { cluster, user };
  if (s.namespace) contextBody.namespace = s.namespace;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    preferences: {},
    'current-context': context,
    clusters: [{ name: cluster, cluster: clusterBody }],
    users: [{ name: user, user: userBody }],
    contexts: [{ name: context, context: contextBody }],
  });
}

/**
 * Writes a kubeconfig with mode 0600 (it holds credentials) through {@link writeFileAtomic}: a
 * fsynced temp file renamed over the old one, so a reader (kubectl, a restarting agent) never sees
 * a half-written file and a failed write leaves the old file in place. Every kubeconfig nodelet
 * writes (the server's admin.kubeconfig, `nodelet join`, `nodelet kubeconfig create`) goes here.
 */
export async function writeKubeconfig(file: string, s: KubeconfigSpec): Promise<void> {
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(file, formatKubeconfig(s), 0o600);
  } catch (err) {
    throw new AgentError('ERR_INTERNAL', `cannot write kubeconfig "${file}"`, { cause: err });
  }
}
