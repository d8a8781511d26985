/**
 * Image references: parsing, validation and Docker-style normalisation.
 *
 * Grammar (distribution/reference `reference.go`):
 *   reference      := name [ ":" tag ] [ "@" digest ]
 *   name           := [ domain "/" ] path-component ( "/" path-component )*
 *   domain         := host [ ":" port ]          host := dns-name | IPv4 | "[" IPv6 "]"
 *   path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
 *   tag            := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
 *   digest         := algorithm ":" hex          (sha256: 64 hex, sha512: 128 hex)
 * Normalisation (docker `splitDockerDomain`): the first component is a domain only when it
 * contains "." or ":", is "localhost", or has upper-case letters; otherwise the domain is
 * `docker.io`, and single-component names on docker.io get `library/`. `index.docker.io` becomes
 * `docker.io`. With neither tag nor digest the tag is `latest`.
 */
import { AgentError } from '@nodelet/base';

export const DEFAULT_DOMAIN = 'docker.io';
export const DEFAULT_TAG = 'latest';
const LEGACY_DEFAULT_DOMAIN = 'index.docker.io';
const OFFICIAL_PREFIX = 'library/';
const NAME_MAX = 255;

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DOMAIN_COMPONENT = /^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$/;
const IPV6_HOST = /^\[[a-fA-F0-9:.]+\]$/;
const PORT = /^[0-9]+$/;
const DIGEST_ALGORITHM = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*$/;
const DIGEST_HEX: Readonly<Record<string, number>> = { sha256: 64, sha384: 96, sha512: 128 };

export interface ImageReference {
  /** Registry host[:port], e.g. `docker.io`, `127.0.0.1:5000`. */
  domain: string;
  /** Repository path inside the registry, e.g. `library/busybox`. */
  path: string;
  /** Tag; `latest` when the input had neither tag nor digest. Undefined for digest-only refs. */
  tag?: string;
  digest?: string;
}

/** `domain/path` — the repository name containerd and CRI report in `repoTags`. */
export function repositoryOf(ref: ImageReference): string {
  return `${ref.domain}/${ref.path}`;
}

/** The fully qualified string: `domain/path[:tag][@digest]`. */
export function formatReference(ref: ImageReference): string {
  return repositoryOf(ref) + (ref.tag ? `:${ref.tag}` : '') + (ref.digest ? `@${ref.digest}` : '');
}

/** The short form users type: drops `docker.io/` and `library/` (`busybox:latest`). */
export function familiarReference(ref: ImageReference): string {
  let name = repositoryOf(ref);
  if (ref.domain === DEFAULT_DOMAIN) {
    name = ref.path.startsWith(OFFICIAL_PREFIX) && !ref.path.slice(OFFICIAL_PREFIX.length).includes('/') ? ref.path.slice(OFFICIAL_PREFIX.length) : ref.path;
  }
  return name + (ref.tag ? `:${ref.tag}` : '') + (ref.digest ? `@${ref.digest}` : '');
}

/**
 * Parses and normalises `input` (`busybox`, `127.0.0.1:5000/pause:3.9`, `x@sha256:…`).
 * Throws ERR_INVALID_ARGUMENT whose message names the offending part.
 */
export function parseImageReference(input: string): ImageReference {
  const fail = (why: string): never => {
    throw new AgentError('ERR_INVALID_ARGUMENT', `invalid image reference "${input}": ${why}`);
  };
  if (input === '') fail('it is empty');
  if (input.trim() !== input) fail('it has leading or trailing white space');

  let rest = input;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    checkDigest(digest, fail);
  }

  // A ":" after the last "/" starts the tag; earlier ones belong to a domain port.
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (tag === '') fail('the tag after ":" is empty');
    if (!TAG.test(tag)) fail(`tag "${tag}" must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`);
  }
  if (rest === '') fail('the repository name is empty');

  let domain = DEFAULT_DOMAIN;
  let path = rest;
  const slash = rest.indexOf('/');
  if (slash >= 0) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost' || first.toLowerCase() !== first) {
      domain = first;
      path = rest.slice(slash + 1);
      checkDomain(domain, fail);
    }
  }
  if (domain === LEGACY_DEFAULT_DOMAIN) domain = DEFAULT_DOMAIN;
  if (path === '') fail('the repository path after the registry host is empty');
  checkPath(path, fail);
  if (domain === DEFAULT_DOMAIN && !path.includes('/')) path = OFFICIAL_PREFIX + path;
  if (`${domain}/${path}`.length > NAME_MAX) fail(`the repository name is longer than ${NAME_MAX} characters`);

  if (tag === undefined && digest === undefined) tag = DEFAULT_TAG;
  const ref: ImageReference = { domain, path };
  if (tag !== undefined) ref.tag = tag;
  if (digest !== undefined) ref.digest = digest;
  return ref;
}

/** Normalises a reference string: `busybox` → `docker.io/library/busybox:latest`. */
export function normalizeReference(input: string): string {
  return formatReference(parseImageReference(input));
}

/** Validates a registry repository name (no domain), as in `/v2/<name>/…`. */
export function validateRepositoryName(name: string): string {
  checkPath(name, (why) => {
    throw new AgentError('ERR_INVALID_ARGUMENT', `invalid repository name "${name}": ${why}`);
  });
  if (name.length > NAME_MAX) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid repository name "${name}": longer than ${NAME_MAX} characters`);
  return name;
}

/** True for a valid registry repository name (`/v2/<name>/…`), without throwing. */
export function isRepositoryName(name: string): boolean {
  return name.length <= NAME_MAX && name.split('/').every((c) => PATH_COMPONENT.test(c));
}

export function isTag(tag: string): boolean {
  return TAG.test(tag);
}

export function validateTag(tag: string): string {
  if (!TAG.test(tag)) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid tag "${tag}": must match [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`);
  return tag;
}

function checkPath(path: string, fail: (why: string) => never): void {
  if (path === '') fail('it is empty');
  for (const c of path.split('/')) {
    if (c === '') fail('it has an empty path component ("//" or a leading/trailing "/")');
    if (c.toLowerCase() !== c) fail(`repository path component "${c}" must be lower-case`);
    if (!PATH_COMPONENT.test(c)) fail(`repository path component "${c}" may hold only [a-z0-9] separated by ".", "_", "__" or "-"`);
  }
}

function checkDomain(domain: string, fail: (why: string) => never): void {
  let host = domain;
  const portAt = domain.startsWith('[') ? domain.indexOf(']:') + 1 : domain.lastIndexOf(':');
  if (portAt > 0) {
    const port = domain.slice(portAt + 1);
    host = domain.slice(0, portAt);
    if (!PORT.test(port) || Number(port) > 65535) fail(`port "${port}" of registry "${domain}" is not a number from 0 to 65535`);
  }
  if (IPV6_HOST.test(host)) return;
  for (const c of host.split('.')) {
    if (!DOMAIN_COMPONENT.test(c)) fail(`registry host "${host}" has an invalid component "${c}"`);
  }
}

function checkDigest(digest: string, fail: (why: string) => never): void {
  const sep = digest.indexOf(':');
  if (sep <= 0) fail(`digest "${digest}" must look like "sha256:<64 hex digits>"`);
  const algorithm = digest.slice(0, sep);
  const hex = digest.slice(sep + 1);
  if (!DIGEST_ALGORITHM.test(algorithm)) fail(`digest algorithm "${algorithm}" is malformed`);
  const want = DIGEST_HEX[algorithm];
  if (want === undefined) fail(`digest algorithm "${algorithm}" is not supported (want sha256, sha384 or sha512)`);
  if (!/^[a-f0-9]+$/.test(hex) || hex.length !== want) fail(`digest "${digest}" must have ${want} lower-case hex digits after "${algorithm}:"`);
}
