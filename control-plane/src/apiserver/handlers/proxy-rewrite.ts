/**
 * The URL rewriting of the proxy subresources (kube-apiserver's proxy transport): links the
 * target hands out to its own paths are put under the proxy path, so a browser behind
 * `kubectl proxy` or the API server stays there.
 *
 *   Location: /x, or http://<target host:port>/x      → <proxy prefix>/x   (same query and fragment)
 *   text/html attributes (a href, img src, form action, …) the same way
 *   relative links (`x`, `../x`), other hosts, paths already under the prefix: unchanged
 *
 * HTML is rewritten from the whole body (gzip and deflate decoded, and sent back decoded, with
 * no Content-Encoding); a body over 16 MiB is a 502.
 */
import { gunzipSync, inflateSync } from 'node:zlib';
import { StatusError } from '../status.js';

/** The HTML attributes that carry URLs, by tag (upstream's table). */
const URL_ATTRS: Record<string, readonly string[]> = {
  a: ['href'], applet: ['codebase'], area: ['href'], audio: ['src'], base: ['href'], blockquote: ['cite'], body: ['background'],
  button: ['formaction'], command: ['icon'], del: ['cite'], embed: ['src'], form: ['action'], frame: ['longdesc', 'src'], head: ['profile'],
  html: ['manifest'], iframe: ['longdesc', 'src'], img: ['longdesc', 'src', 'usemap'], input: ['src', 'usemap', 'formaction'], ins: ['cite'],
  link: ['href'], object: ['classid', 'codebase', 'data', 'usemap'], q: ['cite'], script: ['src'], source: ['src'], video: ['poster', 'src'],
};

/** The largest HTML body rewritten. */
export const MAX_REWRITTEN_BYTES = 16 * 1024 * 1024;

/**
 * `url` as the client should follow it: under `prefix` when it names a path on the target
 * (`targetHost` is its `host:port`), else unchanged.
 */
export function rewriteProxyUrl(url: string, prefix: string, targetHost: string): string {
  let rest: string;
  const absolute = /^([a-z][a-z0-9+.-]*:)?\/\/([^/?#]*)(.*)$/i.exec(url);
  if (absolute) {
    if (absolute[2]!.toLowerCase() !== targetHost.toLowerCase()) return url;
    rest = absolute[3] || '/';
  } else {
    rest = url;
  }
  if (!rest.startsWith('/')) return url;
  const pathEnd = rest.search(/[?#]/);
  const path = pathEnd < 0 ? rest : rest.slice(0, pathEnd);
  if (path === prefix || path.startsWith(`${prefix}/`)) return rest;
  return `${prefix}${rest}`;
}

/** Rewrites the URL attributes of an HTML document (quoted or bare values). */
export function rewriteHtml(html: string, prefix: string, targetHost: string): string {
  return html.replace(/<([a-zA-Z][a-zA-Z0-9]*)(\s[^>]*)?>/g, (tag: string, name: string, attrs: string | undefined) => {
    const wanted = URL_ATTRS[name.toLowerCase()];
    if (!wanted || !attrs) return tag;
    const rewritten = attrs.replace(/(\s)([a-zA-Z-]+)(\s*=\s*)("([^"]*)"|'([^']*)'|([^\s"'>]+))/g, (whole: string, sp: string, attr: string, eq: string, _v: string, dq?: string, sq?: string, bare?: string) => {
      if (!wanted.includes(attr.toLowerCase())) return whole;
      const value = dq ?? sq ?? bare ?? '';
      const quote = dq !== undefined ? '"' : sq !== undefined ? "'" : '';
      return `${sp}${attr}${eq}${quote}${rewriteProxyUrl(value, prefix, targetHost)}${quote}`;
    });
    return `<${name}${rewritten}>`;
  });
}

/** Whether a Content-Type is HTML (the body is then rewritten). */
export function isHtml(contentType: string | string[] | undefined): boolean {
  const t = Array.isArray(contentType) ? contentType[0] : contentType;
  return (t ?? '').split(';')[0]!.trim().toLowerCase() === 'text/html';
}

/** The decoded body of an HTML answer (`identity`, `gzip`, `deflate`); another encoding is passed through as it is. */
export function decodeBody(body: Buffer, encoding: string | undefined): Buffer | undefined {
  if (body.length > MAX_REWRITTEN_BYTES) throw new StatusError(502, 'InternalError', `the proxied HTML answer is larger than ${MAX_REWRITTEN_BYTES} bytes`);
  const e = (encoding ?? '').trim().toLowerCase();
  if (e === '' || e === 'identity') return body;
  if (e === 'gzip') return gunzipSync(body, { maxOutputLength: MAX_REWRITTEN_BYTES });
  if (e === 'deflate') return inflateSync(body, { maxOutputLength: MAX_REWRITTEN_BYTES });
  return undefined;
}
