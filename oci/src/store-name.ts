/**
 * How an image reference becomes a name in an image store (docs/images.md, "Names"):
 * the registry host is dropped, and on Docker Hub the `library/` prefix of official images too.
 *
 *   nginx:1, docker.io/library/nginx:1   → nginx:1        pull 127.0.0.1:5000/nginx:1
 *   ghcr.io/acme/tools/web:v2            → acme/tools/web:v2
 *   127.0.0.1:5000/lab/web:v1            → lab/web:v1
 *
 * The store is then served by whichever registry serves it, so a name carries no host. Two
 * references that differ only by host (`quay.io/x/y:1`, `docker.io/x/y:1`) share a store name;
 * the later import replaces the earlier.
 */
import { AgentError } from '@nodelet/base';
import { DEFAULT_DOMAIN, parseImageReference } from './reference.js';

export interface StoreName {
  name: string;
  tag: string;
}

/** The store name of `reference`; ERR_INVALID_ARGUMENT when it is invalid or has no tag. */
export function storeNameOf(reference: string): StoreName {
  const ref = parseImageReference(reference);
  if (ref.tag === undefined) throw new AgentError('ERR_INVALID_ARGUMENT', `image reference "${reference}" has a digest but no tag: a store names images by tag`);
  return { name: storeRepositoryOf(ref.domain, ref.path), tag: ref.tag };
}

/** The store repository of `domain/path` (a parsed reference's parts): the path, less Docker Hub's `library/`. */
function storeRepositoryOf(domain: string, path: string): string {
  const official = domain === DEFAULT_DOMAIN && /^library\/[^/]+$/.test(path);
  return official ? path.slice('library/'.length) : path;
}

/**
 * The store repository a registry mirror serves for repository `name` of upstream registry `ns`
 * (containerd adds `?ns=<host>` when it pulls `<host>/<name>` through a mirror): the store name
 * `ns/name` was imported under, so `library/busybox` of `docker.io` is `busybox`, `x/y` of
 * `quay.io` is `x/y`. ERR_INVALID_ARGUMENT when `ns` is not a registry host or `name` is invalid.
 */
export function mirroredRepositoryOf(ns: string, name: string): string {
  let ref;
  try {
    ref = parseImageReference(`${ns}/${name}`);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `repository "${name}" of registry "${ns}" is invalid: ${(err as Error).message}`, { cause: err });
  }
  // A non-host `ns` ("library") would parse as the first path component, not as the domain.
  if (!isRegistryHost(ns)) throw new AgentError('ERR_INVALID_ARGUMENT', `"${ns}" is not a registry host`);
  return storeRepositoryOf(ref.domain, ref.path);
}

/** Whether `s` is taken as a registry host in front of a path (Docker's rule: `.`, `:`, `localhost`…). */
function isRegistryHost(s: string): boolean {
  try {
    return parseImageReference(`${s}/a/b`).path === 'a/b';
  } catch {
    return false;
  }
}

/** The fully qualified reference an exported image is named with (`busybox:latest` → `docker.io/library/busybox:latest`). */
export function qualifiedNameOf(s: StoreName): string {
  const ref = parseImageReference(`${s.name}:${s.tag}`);
  return `${ref.domain}/${ref.path}:${s.tag}`;
}

/** What containerd pulls a stored image as through the registry at `registry` (`host:port`). */
export function pullReferenceOf(registry: string, s: StoreName): string {
  return `${registry}/${s.name}:${s.tag}`;
}
