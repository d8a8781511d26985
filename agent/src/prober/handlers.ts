/**
 * The four probe handlers (kubelet pkg/probe exec/http/tcp/grpc). Each returns a result, never throws
 * for a failing target: a refused connection, a timeout or a non-zero exit is a probe failure.
 * The exec handler goes through CRI ExecSync; http, tcp and grpc dial the pod IP from the agent.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { describeError, isAbortError, linkAbort } from '@nodelet/base';
import { checkGrpcHealth } from '@nodelet/cri-client';
import type { Container, HTTPGetAction, Probe } from '@nodelet/api/agent';

export type ProbeType = 'liveness' | 'readiness' | 'startup';
export type ProbeOutcome = 'success' | 'failure';

export interface ProbeResult {
  outcome: ProbeOutcome;
  /** What the kubelet puts after "probe failed: " (stdout/stderr, status line, dial error). */
  output: string;
}

/** CRI ExecSync as the prober needs it (timeout in seconds, like the CRI field). */
export interface ExecRunner {
  execSync(containerId: string, cmd: string[], timeoutS: number, signal: AbortSignal): Promise<{ exitCode: number; output: string }>;
}

export interface ProbeTarget {
  container: Container;
  containerId: string;
  podIP?: string;
}

/** What probes send as their user agent (kubelet's `kube-probe/<major>.<minor>`). */
const KUBE_PROBE_USER_AGENT = 'kube-probe/1.32';

/** A port given by name resolves through the container's ports (kubelet findPortByName). */
export function resolvePort(port: number | string, c: Container): number {
  if (typeof port === 'number') return port;
  const n = Number(port);
  if (Number.isInteger(n) && n > 0) return n;
  const p = (c.ports ?? []).find((x) => x.name === port);
  if (!p) throw new Error(`couldn't find port: ${port} in container ${c.name}`);
  return p.containerPort;
}

export async function runProbe(probe: Probe, t: ProbeTarget, exec: ExecRunner, signal: AbortSignal): Promise<ProbeResult> {
  const timeoutS = probe.timeoutSeconds ?? 1;
  try {
    if (probe.exec) {
      const r = await exec.execSync(t.containerId, probe.exec.command ?? [], timeoutS, signal);
      return { outcome: r.exitCode === 0 ? 'success' : 'failure', output: r.output };
    }
    if (probe.httpGet) return await httpProbe(probe.httpGet, t, timeoutS * 1000, signal);
    if (probe.tcpSocket) {
      const host = probe.tcpSocket.host || t.podIP;
      if (!host) return { outcome: 'failure', output: 'pod has no IP yet' };
      return await tcpProbe(host, resolvePort(probe.tcpSocket.port, t.container), timeoutS * 1000, signal);
    }
    if (probe.grpc) {
      // kubelet dials the pod IP only: GRPCAction has no host field.
      if (!t.podIP) return { outcome: 'failure', output: 'pod has no IP yet' };
      const r = await checkGrpcHealth({ host: t.podIP, port: probe.grpc.port, service: probe.grpc.service ?? '', timeoutMs: timeoutS * 1000, userAgent: KUBE_PROBE_USER_AGENT, signal });
      return { outcome: r.healthy ? 'success' : 'failure', output: r.output };
    }
    return { outcome: 'failure', output: 'probe has no supported handler (exec, httpGet, tcpSocket, grpc)' };
  } catch (err) {
    if (isAbortError(err) && signal.aborted) throw err;
    return { outcome: 'failure', output: describeError(err) };
  }
}

/** Most of a response body kept for the probe's output (kubelet's maxRespBodyLength). */
const MAX_BODY_BYTES = 10 * 1024;

/**
 * GET with `timeoutS` over the whole exchange (connect, status line and headers, body), like
 * kubelet's `http.Client.Timeout`: a server that trickles bytes fails when the time is up, not
 * when it pauses. The status line decides; of a 2xx/3xx body at most MAX_BODY_BYTES are read
 * for the output, then the connection is dropped. Shutdown (`signal`) rejects with AbortError.
 */
async function httpProbe(a: HTTPGetAction, t: ProbeTarget, timeoutMs: number, signal: AbortSignal): Promise<ProbeResult> {
  const host = a.host || t.podIP;
  if (!host) return { outcome: 'failure', output: 'pod has no IP yet' };
  const port = resolvePort(a.port, t.container);
  const path = a.path || '/';
  const scheme = (a.scheme ?? 'HTTP').toLowerCase();
  const headers: Record<string, string> = { 'User-Agent': KUBE_PROBE_USER_AGENT, Accept: '*/*' };
  for (const h of a.httpHeaders ?? []) headers[h.name] = h.value;
  const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${path.startsWith('/') ? path : `/${path}`}`;
  const deadline = linkAbort(signal, timeoutMs);
  try {
    return await new Promise<ProbeResult>((resolve, reject) => {
      let phase: 'headers' | 'body' = 'headers';
      const fail = (err: Error): void => {
        if (signal.aborted) reject(signal.reason instanceof Error ? signal.reason : err);
        else if (deadline.signal.aborted) {
          const during = phase === 'headers' ? 'Client.Timeout exceeded while awaiting headers' : 'Client.Timeout or context cancellation while reading body';
          resolve({ outcome: 'failure', output: `Get "${url}": context deadline exceeded (${during})` });
        } else resolve({ outcome: 'failure', output: err.message.startsWith('Get "') ? err.message : `Get "${url}": ${err.message}` });
      };
      const mod = scheme === 'https' ? https : http;
      // kubelet skips TLS verification for https probes.
      const req = mod.get(url, { headers, signal: deadline.signal, rejectUnauthorized: false, agent: false }, (res) => {
        phase = 'body';
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 400) {
          res.destroy();
          resolve({ outcome: 'failure', output: `HTTP probe failed with statuscode: ${code}` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const done = (): void => {
          res.destroy();
          resolve({ outcome: 'success', output: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString('utf8') });
        };
        res.on('data', (d: Buffer) => {
          chunks.push(d);
          size += d.length;
          if (size >= MAX_BODY_BYTES) done();
        });
        res.on('end', done);
        res.on('error', fail);
      });
      req.on('error', fail);
    });
  } finally {
    deadline.dispose();
  }
}

function tcpProbe(host: string, port: number, timeoutMs: number, signal: AbortSignal): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: timeoutMs, signal });
    s.once('connect', () => {
      s.destroy();
      resolve({ outcome: 'success', output: '' });
    });
    s.once('timeout', () => s.destroy(new Error(`dial tcp ${host}:${port}: i/o timeout`)));
    s.once('error', (err) => resolve({ outcome: 'failure', output: err.message }));
  });
}
