/**
 * One POST of an AdmissionReview to a webhook over HTTPS. A `url` is dialled as written; a
 * `service` reference is resolved as kube-apiserver's endpoint resolver does (the Service's port
 * → the EndpointSlice port of the same name → a ready endpoint address, chosen at random), and
 * the certificate is verified against `<service>.<namespace>.svc` with the configuration's
 * `caBundle` (the system roots when it is empty). The call stops at the webhook's timeout or when
 * the request's own signal aborts.
 */
import { request } from 'node:https';
import { isIP } from 'node:net';
import type { WebhookClientConfig } from '@nodelet/api';
import type { ServerContext } from '../../context.js';
import { MAX_BODY_BYTES } from '../../media.js';
import { isPlainObject, type ApiObject } from '../../object.js';

/** A webhook that could not be called or answered nonsense; its failurePolicy decides (upstream ErrCallingWebhook). */
export class WebhookCallError extends Error {}

/** The label EndpointSlices carry with their Service's name. */
const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

interface Target {
  /** Host to dial (an IP for a service reference). */
  host: string;
  port: number;
  path: string;
  /** Name the certificate must be valid for. */
  servername: string;
  /** The URL the error messages name, as upstream writes it. */
  display: string;
}

const hostForUrl = (host: string): string => (isIP(host) === 6 ? `[${host}]` : host);

/** A ready address and port of the Service's port `port` (upstream ResolveEndpoint over EndpointSlices). */
async function resolveService(ctx: ServerContext, ns: string, name: string, port: number): Promise<{ host: string; port: number }> {
  const svc = await ctx.resource('', 'v1', 'services')!.registry.find(ns, name);
  if (!svc) throw new WebhookCallError(`service "${name}" not found`);
  const spec = isPlainObject(svc.spec) ? svc.spec : {};
  if (spec.type === 'ExternalName') throw new WebhookCallError(`unsupported service type "ExternalName"`);
  const svcPort = (Array.isArray(spec.ports) ? spec.ports : []).find((p) => isPlainObject(p) && p.port === port) as { name?: string } | undefined;
  if (!svcPort) throw new WebhookCallError(`no service port ${port} found for service "${name}"`);
  const slices = await ctx.resource('discovery.k8s.io', 'v1', 'endpointslices')!.registry.list({ namespace: ns, filter: (o: ApiObject) => o.metadata.labels?.[SERVICE_NAME_LABEL] === name });
  const candidates: Array<{ host: string; port: number }> = [];
  for (const slice of slices.items) {
    const p = (Array.isArray(slice.ports) ? slice.ports : []).find((x) => isPlainObject(x) && (x.name ?? '') === (svcPort.name ?? '')) as { port?: number } | undefined;
    if (typeof p?.port !== 'number') continue;
    for (const ep of Array.isArray(slice.endpoints) ? slice.endpoints : []) {
      if (!isPlainObject(ep) || (isPlainObject(ep.conditions) && ep.conditions.ready === false)) continue;
      const address = Array.isArray(ep.addresses) ? ep.addresses[0] : undefined;
      if (typeof address === 'string') candidates.push({ host: address, port: p.port });
    }
  }
  if (!candidates.length) throw new WebhookCallError(`no endpoints available for service "${name}"`);
  return candidates[Math.floor(Math.random() * candidates.length)]!;
}

async function targetOf(ctx: ServerContext, cc: WebhookClientConfig, timeoutSeconds: number): Promise<Target> {
  const query = `?timeout=${timeoutSeconds}s`;
  if (cc.url) {
    const u = new URL(cc.url);
    const host = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
    return { host, port: Number(u.port || 443), path: `${u.pathname}${query}`, servername: host, display: `${cc.url}${query}` };
  }
  const s = cc.service!;
  const port = s.port ?? 443;
  const servername = `${s.name}.${s.namespace}.svc`;
  const path = `${s.path || '/'}${query}`;
  const display = `https://${servername}:${port}${path}`;
  const ep = await resolveService(ctx, s.namespace, s.name, port).catch((err: unknown) => {
    throw new WebhookCallError(`failed to call webhook: Post "${display}": ${(err as Error).message}`);
  });
  return { host: ep.host, port: ep.port, path, servername, display };
}

/**
 * POSTs `review` and returns the parsed JSON answer. Network, TLS, timeout and non-200 answers
 * throw {@link WebhookCallError} with upstream's `failed to call webhook: Post "<url>": <why>`.
 */
export async function postReview(ctx: ServerContext, cc: WebhookClientConfig, timeoutSeconds: number, review: unknown, signal: AbortSignal | undefined): Promise<unknown> {
  const t = await targetOf(ctx, cc, timeoutSeconds);
  const deadline = AbortSignal.timeout(timeoutSeconds * 1000);
  const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const body = Buffer.from(JSON.stringify(review));
  const ca = cc.caBundle ? Buffer.from(cc.caBundle, 'base64').toString('utf8') : undefined;
  const fail = (why: string): WebhookCallError => new WebhookCallError(`failed to call webhook: Post "${t.display}": ${why}`);
  const text = await new Promise<string>((resolve, reject) => {
    const req = request(
      {
        host: t.host, port: t.port, path: t.path, method: 'POST', agent: false, signal: stop,
        ...(isIP(t.servername) ? {} : { servername: t.servername }),
        ...(ca ? { ca } : {}),
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': body.length, Host: `${hostForUrl(t.servername)}:${t.port}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY_BYTES) req.destroy(new Error(`response body larger than ${MAX_BODY_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => {
          const out = Buffer.concat(chunks).toString('utf8');
          if (res.statusCode !== 200) reject(new WebhookCallError(`failed to call webhook: the server responded with the status code ${res.statusCode ?? 0}: ${out.slice(0, 200)}`));
          else resolve(out);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  }).catch((err: unknown) => {
    if (err instanceof WebhookCallError) throw err;
    // The request's own end (client gone, its deadline) is not the webhook's failure: it propagates as it is.
    if (signal?.aborted) throw signal.reason;
    throw fail(deadline.aborted ? 'context deadline exceeded' : (err as Error).message);
  });
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new WebhookCallError(`received invalid webhook response: ${(err as Error).message}`);
  }
}
