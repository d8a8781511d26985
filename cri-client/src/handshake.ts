/**
 * The kubelet's start-up sequence against a runtime: Version("0.1.0") must answer "0.1.0", and the
 * runtime may take a moment to come up (kubelet waits up to 30 s).
 */
import { AgentError, delay, hasCode } from '@nodelet/base';
import type { VersionResponse__Output } from '@nodelet/proto';
import { createCriClient, type CriClientOptions } from './client.js';
import type { CallOptions, CriClient } from './types.js';

/** The CRI API version the kubelet sends and requires back. */
export const CRI_API_VERSION = '0.1.0';

/**
 * Calls Version and rejects a runtime that does not speak CRI 0.1.0 (ERR_FAILED_PRECONDITION).
 * Connection failures surface as ERR_UNAVAILABLE from the client.
 */
export async function handshake(client: CriClient, options?: CallOptions): Promise<VersionResponse__Output> {
  const v = await client.runtime.version({ version: CRI_API_VERSION }, options);
  if (v.version !== CRI_API_VERSION) {
    throw new AgentError(
      'ERR_FAILED_PRECONDITION',
      `container runtime at ${client.endpoint} (${v.runtimeName || 'unknown'} ${v.runtimeVersion}) answered CRI version "${v.version}", ` +
        `nodelet needs "${CRI_API_VERSION}" (runtime API ${v.runtimeApiVersion || 'unknown'}); upgrade the runtime or point at a CRI v1 runtime`,
    );
  }
  return v;
}

export interface ConnectOptions extends CriClientOptions {
  signal?: AbortSignal;
  /** How long to keep retrying while the runtime is unreachable (default 0: one attempt). */
  waitMs?: number;
}

/**
 * createCriClient + handshake. With `waitMs`, retries ERR_UNAVAILABLE every 500 ms until then
 * (the kubelet's maxWaitForContainerRuntime is 30 s). Closes the client on failure.
 */
export async function connectCriClient(opts: ConnectOptions): Promise<{ client: CriClient; version: VersionResponse__Output }> {
  const client = createCriClient(opts);
  const until = Date.now() + (opts.waitMs ?? 0);
  try {
    for (;;) {
      try {
        const version = await handshake(client, { signal: opts.signal, timeoutMs: opts.timeoutMs ?? 10_000 });
        return { client, version };
      } catch (err) {
        if (!hasCode(err, 'ERR_UNAVAILABLE') || Date.now() + 500 > until) throw err;
        await delay(500, opts.signal);
      }
    }
  } catch (err) {
    client.close();
    throw err;
  }
}
