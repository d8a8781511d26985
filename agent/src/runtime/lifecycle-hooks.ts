/**
 * Container lifecycle hook handlers (kubelet pkg/kubelet/lifecycle/handlers.go): `exec` through
 * CRI ExecSync, `httpGet` from the agent to the pod IP (or `host`), `sleep` on the agent's clock.
 * When they run and what a failure does is the caller's business (container-stop.ts for preStop,
 * pod-runtime.ts for postStart; docs/agent.md, "Lifecycle hooks").
 *
 * A handler resolves with `undefined` on success or with kubelet's failure message; it never
 * throws for a failing target. It rejects only with an AbortError when `signal` aborts.
 */
import http from 'node:http';
import https from 'node:https';
import { describeError, isAbortError, type Clock } from '@nodelet/base';
import type { Container, LifecycleHandler, Pod } from '@nodelet/api/agent';
import { resolvePort } from '../prober/handlers.js';
import type { RuntimeService } from '../kubecontainer/cri.js';

/** What the handlers need from the node. */
export interface HookDeps {
  runtime: Pick<RuntimeService, 'execSync'>;
  clock: Clock;
  runtimeRequestTimeoutMs: number;
}

export interface HookTarget {
  pod: Pod;
  container: Container;
  containerId: string;
  /** The pod's first IP, for httpGet without `host`. */
  podIP?: string;
}

/** kubelet's `format.Pod`: `name_namespace(uid)`. */
function formatPod(pod: Pod): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}

/** Go's `%v` of a string slice. */
const goList = (xs: readonly string[]): string => `[${xs.join(' ')}]`;

/**
 * Runs one handler. `timeoutS` bounds an exec hook through CRI's own timeout (0 = none, as
 * kubelet's postStart); the caller's `signal` bounds everything (preStop aborts it when the grace
 * period is used up, the pod worker when the pod starts terminating).
 */
export async function runLifecycleHook(handler: LifecycleHandler, t: HookTarget, deps: HookDeps, o: { timeoutS?: number; signal: AbortSignal }): Promise<string | undefined> {
  const { container: c, pod } = t;
  if (handler.exec) {
    const cmd = handler.exec.command ?? [];
    const timeoutS = Math.max(0, Math.ceil(o.timeoutS ?? 0));
    let error: string;
    let output = '';
    try {
      const r = await deps.runtime.execSync(
        { containerId: t.containerId, cmd, timeout: timeoutS },
        { signal: o.signal, timeoutMs: timeoutS > 0 ? timeoutS * 1000 + deps.runtimeRequestTimeoutMs : Infinity },
      );
      if (r.exitCode === 0) return undefined;
      output = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
      // kubelet's remote runtime turns a non-zero exit into this error.
      error = `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${r.stderr.toString('utf8')}`;
    } catch (err) {
      if (isAbortError(err) && o.signal.aborted) throw err;
      error = describeError(err);
    }
    return `Exec lifecycle hook (${goList(cmd)}) for Container ${JSON.stringify(c.name)} in Pod ${JSON.stringify(formatPod(pod))} failed - error: ${error}, message: ${JSON.stringify(output)}`;
  }
  if (handler.httpGet) {
    const error = await httpHook(handler.httpGet, t, o.signal);
    if (error === undefined) return undefined;
    return `HTTP lifecycle hook (${handler.httpGet.path ?? ''}) for Container ${JSON.stringify(c.name)} in Pod ${JSON.stringify(formatPod(pod))} failed - error: ${error}`;
  }
  if (handler.sleep) {
    await deps.clock.sleep(Math.max(0, handler.sleep.seconds) * 1000, o.signal);
    return undefined;
  }
  return `invalid handler: ${JSON.stringify(handler)}`;
}

/**
 * kubelet's lifecycle GET: any HTTP response counts as success (only a transport error fails,
 * unlike a probe), the body is discarded. HTTPS skips verification as probes do.
 */
async function httpHook(a: NonNullable<LifecycleHandler['httpGet']>, t: HookTarget, signal: AbortSignal): Promise<string | undefined> {
  const host = a.host || t.podIP;
  if (!host) return 'failed to find networking container: the pod has no IP';
  let port: number;
  try {
    port = resolvePort(a.port, t.container);
  } catch (err) {
    return describeError(err);
  }
  const scheme = (a.scheme ?? 'HTTP').toLowerCase();
  const path = a.path ? (a.path.startsWith('/') ? a.path : `/${a.path}`) : '/';
  const url = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
  const headers: Record<string, string> = { 'User-Agent': 'kube-lifecycle/1.32', Accept: '*/*' };
  for (const h of a.httpHeaders ?? []) headers[h.name] = h.value;
  return new Promise<string | undefined>((resolve, reject) => {
    const mod = scheme === 'https' ? https : http;
    const req = mod.get(url, { headers, signal, rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      res.once('end', () => resolve(undefined));
      res.once('error', () => resolve(undefined)); // the response arrived: that is success
    });
    req.once('error', (err) => {
      if (signal.aborted) reject(err);
      else resolve(`Get ${JSON.stringify(url)}: ${err.message}`);
    });
  });
}
