/**
 * Registry credentials from a pod's image pull secrets, matched to an image as kubelet's keyring
 * matches them (pkg/credentialprovider keyring.go, secrets.MakeDockerKeyring):
 *
 *   - a `kubernetes.io/dockerconfigjson` secret gives `.dockerconfigjson` → `{"auths": {…}}`, a
 *     `kubernetes.io/dockercfg` secret gives `.dockercfg` → `{…}`; other types are not read;
 *   - each entry's key loses its scheme and a leading `/v1/` or `/v2/`: `host[:port][/path]`;
 *   - an entry matches an image when the host has as many dot-separated parts, each matching the
 *     entry's part as a glob (`*.example.com`), the port is the same (none = none), and the
 *     entry's path is a prefix of the image's repository path;
 *   - the matches come most specific first (keys sorted in reverse), all of them: the puller tries
 *     each in turn; with no match, Docker Hub images may use an `index.docker.io` entry;
 *   - `auth` (base64 of `user:password`) sets username and password.
 */
import { AgentError } from '@nodelet/base';
// The subpath alone: the package root also loads image build, archives and tar (~0.5 MiB of
// modules) that the agent never runs.
import { parseImageReference, repositoryOf } from '@nodelet/oci/reference';
import type { Pod } from '@nodelet/api/agent';

/** What PullImage's `auth` carries. */
export interface RegistryAuth {
  username: string;
  password: string;
}

export interface PullSecret {
  name: string;
  type?: string;
  /** The secret's decoded data. */
  data: Record<string, Buffer>;
}

export const DOCKER_CONFIG_JSON_TYPE = 'kubernetes.io/dockerconfigjson';
export const DOCKERCFG_TYPE = 'kubernetes.io/dockercfg';
const DEFAULT_REGISTRY_HOST = 'index.docker.io';

interface Entry {
  username?: unknown;
  password?: unknown;
  auth?: unknown;
}

export class DockerKeyring {
  /** key (`host[:port][/path]`) → credentials in the order they were added */
  readonly #creds = new Map<string, RegistryAuth[]>();
  #index: string[] = [];

  /**
   * Reads the secrets in order. A secret of another type, or without its key, is passed over (as
   * kubelet does); a malformed one is an error naming it, since the pull could not be right.
   */
  static fromSecrets(secrets: readonly PullSecret[]): DockerKeyring {
    const k = new DockerKeyring();
    for (const s of secrets) {
      let cfg: Record<string, Entry> | undefined;
      try {
        if (s.type === DOCKER_CONFIG_JSON_TYPE && s.data['.dockerconfigjson']?.length) {
          const doc = JSON.parse(s.data['.dockerconfigjson'].toString('utf8')) as { auths?: Record<string, Entry> };
          cfg = doc.auths ?? {};
        } else if (s.type === DOCKERCFG_TYPE && s.data['.dockercfg']?.length) {
          cfg = JSON.parse(s.data['.dockercfg'].toString('utf8')) as Record<string, Entry>;
        }
      } catch (err) {
        throw new AgentError('ERR_INVALID_ARGUMENT', `image pull secret "${s.name}": ${(err as Error).message}`);
      }
      if (!cfg || typeof cfg !== 'object') continue;
      for (const [loc, e] of Object.entries(cfg)) k.add(loc, entryAuth(s.name, loc, e ?? {}));
    }
    return k;
  }

  /** Adds a credential for a registry location (a dockercfg key). */
  add(location: string, auth: RegistryAuth): void {
    const key = keyOf(location);
    if (key === undefined) return;
    const list = this.#creds.get(key);
    if (list) list.push(auth);
    else this.#creds.set(key, [auth]);
    this.#index = [...this.#creds.keys()].sort().reverse();
  }

  /** Every credential matching `repo` (an image name without tag or digest), most specific first. */
  lookup(repo: string): RegistryAuth[] {
    const out: RegistryAuth[] = [];
    for (const key of this.#index) if (urlsMatch(key, repo)) out.push(...this.#creds.get(key)!);
    if (out.length > 0) return out;
    if (isDefaultRegistry(repo)) return [...(this.#creds.get(DEFAULT_REGISTRY_HOST) ?? [])];
    return [];
  }
}

function entryAuth(secret: string, loc: string, e: Entry): RegistryAuth {
  let username = typeof e.username === 'string' ? e.username : '';
  let password = typeof e.password === 'string' ? e.password : '';
  if (typeof e.auth === 'string' && e.auth !== '') {
    const decoded = Buffer.from(e.auth, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) throw new AgentError('ERR_INVALID_ARGUMENT', `image pull secret "${secret}", entry "${loc}": unable to parse auth field, must be formatted as base64(username:password)`);
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  return { username, password };
}

/** `https://host:port/v2/path` → `host:port/path`; undefined when it is no URL. */
function keyOf(location: string): string | undefined {
  const withScheme = /^https?:\/\//.test(location) ? location : `https://${location}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    return undefined;
  }
  let path = decodeURIComponent(u.pathname);
  if (path.startsWith('/v2/') || path.startsWith('/v1/')) path = path.slice(3);
  // WHATWG URL lower-cases the host and drops default ports; Go's url.Parse keeps them: take the host as written.
  const host = hostOf(withScheme.replace(/^https?:\/\//, ''));
  return path.length > 0 && path !== '/' ? host + path : host;
}

function hostOf(schemeless: string): string {
  const end = schemeless.search(/[/?#]/);
  return end < 0 ? schemeless : schemeless.slice(0, end);
}

function splitHost(hostPort: string): { parts: string[]; port: string } {
  const m = /^(.*):(\d*)$/.exec(hostPort);
  const host = m ? m[1]! : hostPort;
  return { parts: host.split('.'), port: m ? m[2]! : '' };
}

/** kubelet URLsMatch on schemeless `host[:port][/path]` strings. */
export function urlsMatch(glob: string, target: string): boolean {
  const gHost = hostOf(glob);
  const tHost = hostOf(target);
  const g = splitHost(gHost);
  const t = splitHost(tHost);
  if (g.port !== t.port || g.parts.length !== t.parts.length) return false;
  if (!target.slice(tHost.length).startsWith(glob.slice(gHost.length))) return false;
  return g.parts.every((p, i) => globMatch(p, t.parts[i]!));
}

/** Go filepath.Match on one host label: `*`, `?`, `[…]` classes; `\` escapes. */
function globMatch(pattern: string, s: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const close = pattern.indexOf(']', i + 1);
      if (close < 0) return false; // Go: ErrBadPattern, which kubelet counts as no match
      let cls = pattern.slice(i + 1, close);
      if (cls.startsWith('^')) cls = `\\^${cls.slice(1)}`;
      re += `[${cls.startsWith('!') ? `^${cls.slice(1)}` : cls}]`;
      i = close;
    } else if (ch === '\\' && i + 1 < pattern.length) re += escapeRe(pattern[++i]!);
    else re += escapeRe(ch);
  }
  return new RegExp(`${re}$`).test(s);
}

function escapeRe(c: string): string {
  return c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** An image that resolves to Docker Hub: no registry part, or `docker.io` / `index.docker.io`. */
function isDefaultRegistry(repo: string): boolean {
  const slash = repo.indexOf('/');
  const first = slash < 0 ? repo : repo.slice(0, slash);
  if (first === '') return false;
  if (slash < 0) return true;
  if (first === 'docker.io' || first === DEFAULT_REGISTRY_HOST) return true;
  return !/[.:]/.test(first);
}

/**
 * The repository kubelet looks credentials up for (its repoToPull): the normalised name without
 * tag or digest, `busybox` → `docker.io/library/busybox`.
 */
export function repositoryToPull(image: string): string {
  return repositoryOf(parseImageReference(image));
}

/** Reads one pull secret (its type and decoded data); undefined when it does not exist. */
export type PullSecretReader = (namespace: string, name: string, signal: AbortSignal) => Promise<PullSecret | undefined>;

/**
 * The keyring of a pod's `imagePullSecrets` (kubelet getPullSecretsForPod). A secret that cannot
 * be read is left out and named to `onMissing`, as kubelet warns and pulls with the rest.
 */
export async function podKeyring(pod: Pod, read: PullSecretReader, signal: AbortSignal, onMissing: (names: string[]) => void): Promise<DockerKeyring> {
  const ns = pod.metadata.namespace ?? 'default';
  const names = (pod.spec?.imagePullSecrets ?? []).map((r) => r.name ?? '').filter((n) => n !== '');
  const secrets: PullSecret[] = [];
  const missing: string[] = [];
  for (const name of names) {
    const s = await read(ns, name, signal).catch((err: unknown) => {
      if (signal.aborted) throw err;
      return undefined;
    });
    if (s) secrets.push(s);
    else missing.push(name);
  }
  if (missing.length) onMissing(missing);
  return DockerKeyring.fromSecrets(secrets);
}
