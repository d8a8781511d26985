/**
 * The three probe handlers (kubelet pkg/probe exec/http/tcp). Each returns a result, never throws
 * for a failing target: a refused connection, a timeout or a non-zero exit is a probe failure.
 * The exec handler goes through CRI ExecSync; http and tcp dial the pod IP from the agent.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { describeError, isAbortError } from '@nodelet/base';
import type { Container, HTTPGetAction, Probe } from '@nodelet/api';

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
    return { outcome: 'failure', output: 'probe has no supported handler (exec, httpGet, tcpSocket)' };
  } catch (err) {
    if (isAbortError(err) && signal.aborted) throw err;
    return { outcome: 'failure', output: describeError(err) };
  }
}

function httpProbe(a: HTTPGetAction, t: ProbeTarget, timeoutMs: number, signal: AbortSignal): Promise<ProbeResult> {
  const host = a.host || t.podIP;
  if (!host) return Promise.resolve({ outcome: 'failure', output: 'pod has no IP yet' });
  const port = resolvePort(a.port, t.container);
  const path = a.path || '/';
  const scheme = (a.scheme ?? 'HTTP').toLowerCase();
  const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.32', Accept: '*/*' };
  for (const h of a.httpHeaders ?? []) headers[h.name] = h.value;
  const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${path.startsWith('/') ? path : `/${path}`}`;
  return new Promise((resolve) => {
    const mod = scheme === 'https' ? https : http;
    // kubelet skips TLS verification for https probes.
    const req = mod.get(url, { headers, signal, timeout: timeoutMs, rejectUnauthorized: false, agent: false }, (res) => {
      const code = res.statusCode ?? 0;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { if (body.length < 10 * 1024) body += d; });
      res.on('end', () => {
        if (code >= 200 && code < 400) resolve({ outcome: 'success', output: body });
        else resolve({ outcome: 'failure', output: `HTTP probe failed with statuscode: ${code}` });
      });
      res.on('error', (err) => resolve({ outcome: 'failure', output: describeError(err) }));
    });
    req.on('timeout', () => req.destroy(new Error(`Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)));
    req.on('error', (err) => resolve({ outcome: 'failure', output: err.message.startsWith('Get "') ? err.message : `Get "${url}": ${err.message}` }));
  });
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
