/**
 * Reading the request target of an incoming HTTP request without trusting it. `new URL(target,
 * base)` throws on targets such as `//[` (it reads `//…` as a host), and `decodeURIComponent`
 * throws on `%zz`; both are input errors, so these helpers return `undefined` for the caller to
 * answer 400 instead of throwing.
 */

const ORIGIN = 'https://server.invalid';

/**
 * The URL of an origin-form (`/path?query`) or absolute-form (`https://host/path`) request
 * target; `undefined` when it is neither or does not parse. An origin-form target is always read
 * as a path, as Go's `url.ParseRequestURI` does, so `//host/x` is the path `//host/x`.
 */
export function parseRequestTarget(target: string | undefined): URL | undefined {
  const raw = target ?? '/';
  try {
    if (raw.startsWith('/')) return new URL(ORIGIN + raw);
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The non-empty segments of a path after percent-decoding, or `undefined` for bad
 * percent-encoding. The whole path is decoded before splitting, like the `Path` Go servers route
 * on, so `a%2Fb` is two segments and no segment can contain `/`.
 */
export function decodePathSegments(pathname: string): string[] | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathname);
  } catch {
    return undefined;
  }
  return decoded.split('/').filter((s) => s !== '');
}
