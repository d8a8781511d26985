/**
 * pods/log and pods/exec: the server proxies to the agent of the pod's node, at the node's
 * InternalIP and `status.daemonEndpoints.kubeletEndpoint.Port` (default 10250), over TLS with the
 * server's client certificate (kube-apiserver's --kubelet-client-certificate). The agent's
 * serving certificate is verified against `nodeProxy.ca` (`nodelet server` sets the cluster CA, or
 * --kubelet-certificate-authority), including its name: an IP SAN when the InternalIP is dialled.
 *
 *   kubectl logs  → GET /api/v1/namespaces/<ns>/pods/<p>/log?container=… → GET https://<node>:<port>/containerLogs/<ns>/<p>/<c>?…
 *   kubectl exec  → GET …/pods/<p>/exec?command=…  (Upgrade: websocket, v5.channel.k8s.io)
 *                 → GET https://<node>:<port>/exec/<ns>/<p>/<c>?command=…  (same upgrade, bytes spliced both ways)
 */
import https from 'node:https';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';
import type { RequestScope, ServerContext } from '../context.js';
import type { ApiObject, Json } from '../object.js';
import { badRequest, StatusError } from '../status.js';

export interface PodTarget {
  pod: ApiObject;
  container: string;
  host: string;
  port: number;
}

export async function resolvePodTarget(ctx: ServerContext, namespace: string, name: string, container: string | null): Promise<PodTarget> {
  const pod = await ctx.resource('', 'v1', 'pods')!.registry.get(namespace, name);
  const spec = (pod.spec ?? {}) as Json;
  const containers = ((spec.containers ?? []) as Json[]).map((c) => String(c.name));
  const inits = ((spec.initContainers ?? []) as Json[]).map((c) => String(c.name));
  let chosen = container ?? '';
  if (!chosen) {
    if (containers.length !== 1) throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]`);
    chosen = containers[0]!;
  } else if (!containers.includes(chosen) && !inits.includes(chosen)) {
    throw badRequest(`container ${chosen} is not valid for pod ${name}`);
  }
  const nodeName = spec.nodeName;
  if (typeof nodeName !== 'string' || !nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
  const node = await ctx.resource('', 'v1', 'nodes')!.registry.find(undefined, nodeName);
  if (!node) throw new StatusError(503, 'ServiceUnavailable', `node "${nodeName}" of pod ${name} is not registered`);
  const status = (node.status ?? {}) as Json;
  const addresses = (status.addresses ?? []) as Array<{ type?: string; address?: string }>;
  const host = addresses.find((a) => a.type === 'InternalIP')?.address ?? addresses.find((a) => a.type === 'Hostname')?.address;
  if (!host) throw new StatusError(503, 'ServiceUnavailable', `node "${nodeName}" has no InternalIP address`);
  const port = Number(((status.daemonEndpoints as Json | undefined)?.kubeletEndpoint as Json | undefined)?.Port ?? 10250);
  return { pod, container: chosen, host, port };
}

function tlsOptions(ctx: ServerContext): tls.ConnectionOptions {
  const p = ctx.nodeProxy;
  return {
    ...(p.clientCert && p.clientKey ? { cert: p.clientCert, key: p.clientKey } : {}),
    ...(p.ca ? { ca: p.ca } : {}),
    // Without a CA for agents (an API server built without one, in tests) nothing is verified,
    // as kube-apiserver without --kubelet-certificate-authority.
    rejectUnauthorized: !!p.ca,
  };
}

const UNTRUSTED = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'SELF_SIGNED_CERT_IN_CHAIN', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT', 'CERT_SIGNATURE_FAILURE', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The 503 for a failed dial; a certificate the server does not trust says what to check. */
function dialError(target: PodTarget, err: Error): StatusError {
  const node = String((target.pod.spec as Json).nodeName);
  const code = (err as NodeJS.ErrnoException).code ?? '';
  const hint = UNTRUSTED.has(code)
    ? `; the agent's serving certificate is not trusted (${code}): agents get one signed by the cluster CA once their CSR is approved (kubectl get csr), and an agent serving its own tlsCertFile needs nodelet server --kubelet-certificate-authority <its CA>`
    : '';
  return new StatusError(503, 'ServiceUnavailable', `error dialing the agent of node "${node}" at ${target.host}:${target.port}: ${err.message}${hint}`);
}

const LOG_PARAMS = ['follow', 'tailLines', 'timestamps', 'previous', 'sinceSeconds', 'sinceTime', 'limitBytes'];

export async function handleLog(s: RequestScope): Promise<void> {
  const target = await resolvePodTarget(s.ctx, s.namespace!, s.name!, s.url.searchParams.get('container'));
  const query = new URLSearchParams();
  for (const p of LOG_PARAMS) {
    const v = s.url.searchParams.get(p);
    if (v !== null) query.set(p, v);
  }
  const path = `/containerLogs/${encodeURIComponent(s.namespace!)}/${encodeURIComponent(s.name!)}/${encodeURIComponent(target.container)}?${query}`;
  await new Promise<void>((resolve, reject) => {
    const upstream = https.request(
      { host: target.host, port: target.port, path, method: 'GET', headers: authHeaders(s.ctx), ...tlsOptions(s.ctx) },
      (res) => {
        if ((res.statusCode ?? 500) >= 400) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => reject(new StatusError(res.statusCode ?? 500, 'InternalError', Buffer.concat(chunks).toString('utf8').slice(0, 1000) || 'agent error')));
          return;
        }
        s.res.writeHead(200, { 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' });
        s.res.flushHeaders();
        res.pipe(s.res);
        res.on('end', resolve);
        res.on('error', resolve);
      },
    );
    const abort = (): void => void upstream.destroy();
    s.req.on('close', abort);
    s.ctx.shutdown.addEventListener('abort', abort, { once: true });
    upstream.on('error', (err) => {
      if (s.res.headersSent) resolve();
      else reject(dialError(target, err));
    });
    upstream.on('close', () => s.ctx.shutdown.removeEventListener('abort', abort));
    upstream.end();
  });
}

function authHeaders(ctx: ServerContext): Record<string, string> {
  return ctx.nodeProxy.token ? { Authorization: `Bearer ${ctx.nodeProxy.token}` } : {};
}

const FORWARDED_UPGRADE_HEADERS = ['upgrade', 'connection', 'sec-websocket-key', 'sec-websocket-version', 'sec-websocket-protocol', 'sec-websocket-extensions'];

/**
 * Splices an exec WebSocket upgrade to the agent. The agent's 101 and frames flow back
 * unchanged, so the protocol kubectl negotiated (v5.channel.k8s.io, …) is the agent's to speak.
 */
export async function proxyExecUpgrade(s: RequestScope, socket: Duplex, head: Buffer): Promise<void> {
  const target = await resolvePodTarget(s.ctx, s.namespace!, s.name!, s.url.searchParams.get('container'));
  const query = new URLSearchParams(s.url.searchParams);
  query.delete('container');
  const path = `/exec/${encodeURIComponent(s.namespace!)}/${encodeURIComponent(s.name!)}/${encodeURIComponent(target.container)}?${query}`;
  const upstream = tls.connect({ host: target.host, port: target.port, servername: isIp(target.host) ? undefined : target.host, ...tlsOptions(s.ctx) });
  await new Promise<void>((resolve, reject) => {
    upstream.once('secureConnect', resolve);
    upstream.once('error', (err) => reject(dialError(target, err)));
  });
  const lines = [`GET ${path} HTTP/1.1`, `Host: ${target.host}:${target.port}`];
  for (const h of FORWARDED_UPGRADE_HEADERS) {
    const v = s.req.headers[h];
    if (v !== undefined) lines.push(`${h}: ${Array.isArray(v) ? v.join(', ') : v}`);
  }
  for (const [k, v] of Object.entries(authHeaders(s.ctx))) lines.push(`${k}: ${v}`);
  upstream.write(lines.join('\r\n') + '\r\n\r\n');
  if (head.length) upstream.write(head);
  socket.pipe(upstream);
  upstream.pipe(socket);
  const close = (): void => {
    socket.destroy();
    upstream.destroy();
  };
  socket.on('error', close);
  upstream.on('error', close);
  socket.on('close', close);
  upstream.on('close', close);
  s.ctx.shutdown.addEventListener('abort', close, { once: true });
}

function isIp(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}
