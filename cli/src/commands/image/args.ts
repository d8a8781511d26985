/** Argument parsing and formatting for `nodelet image` (pure; unit-tested in args.test.ts). */
import type { Logger } from '@nodelet/base';
import { DEFAULT_TAG, validateRepositoryName, validateTag } from '@nodelet/oci';

/** `lab/web:v1` → { repository: 'lab/web', tag: 'v1' }; the tag defaults to `latest`. */
export function parseImageName(s: string): { repository: string; tag: string } {
  const colon = s.lastIndexOf(':');
  const hasTag = colon > s.lastIndexOf('/');
  const repository = hasTag ? s.slice(0, colon) : s;
  const first = repository.split('/')[0] ?? '';
  if (repository.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost')) {
    throw new Error(`image name "${s}" names a registry host ("${first}"): give the repository name only (e.g. ${repository.slice(first.length + 1)}${hasTag ? s.slice(colon) : ''}); the store is served by whichever registry serves it`);
  }
  return { repository: validateRepositoryName(repository), tag: hasTag ? validateTag(s.slice(colon + 1)) : DEFAULT_TAG };
}

/** `src:dest[:mode]` with an octal mode (`0755`). */
export function parseFileSpec(s: string): { from: string; to: string; mode?: number } {
  const parts = s.split(':');
  let mode: number | undefined;
  if (parts.length >= 3 && /^[0-7]{3,4}$/.test(parts[parts.length - 1]!)) mode = parseInt(parts.pop()!, 8);
  const to = parts.pop();
  const from = parts.join(':');
  if (!from || !to || !to.startsWith('/')) throw new Error(`invalid --file "${s}": want SRC:/path/in/image[:MODE], e.g. ./app:/usr/bin/app:0755`);
  return mode === undefined ? { from, to } : { from, to, mode };
}

/** `a:b` split at the last colon (the in-image side has none). */
export function parseDirSpec(s: string): { from: string; to: string } {
  const at = s.lastIndexOf(':');
  const from = s.slice(0, at);
  const to = s.slice(at + 1);
  if (at <= 0 || !to) throw new Error(`invalid value "${s}": want A:B, e.g. ./www:/var/www`);
  return { from, to };
}

/** A JSON array of strings, or whitespace-separated words. */
export function parseWords(s: string): string[] {
  const t = s.trim();
  if (t.startsWith('[')) {
    const v: unknown = JSON.parse(t);
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw new Error(`invalid "${s}": want a JSON array of strings`);
    return v;
  }
  return t.split(/\s+/).filter(Boolean);
}

/** Decimal sizes with 4 significant digits (`2.816MB`), as crictl/docker `units.HumanSize` print them. */
export function formatBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let v = n;
  let u = 0;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return u === 0 ? `${n}B` : `${parseFloat(v.toPrecision(4))}${units[u]}`;
}

/** A Logger writing one JSON line per warn/error (and debug when verbose) to stderr. */
export function consoleLogger(verbose: boolean, bindings: Record<string, unknown> = {}): Logger {
  const write = (level: string) => (obj: object, msg: string) => {
    process.stderr.write(JSON.stringify({ level, time: new Date().toISOString(), ...bindings, ...obj, msg }) + '\n');
  };
  const skip = (): void => {};
  return {
    error: write('error'),
    warn: write('warn'),
    info: write('info'),
    debug: verbose ? write('debug') : skip,
    trace: skip,
    child: (b) => consoleLogger(verbose, { ...bindings, ...b }),
  };
}
