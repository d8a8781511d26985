/**
 * Certificate rotation without restart. Every `intervalMs` (default 1 h) the PKI is checked
 * with the same rules as at start ({@link ensurePki}: re-issued within 30 days of expiry, on a
 * missing SAN, or when a key does not match its certificate), and a pair that changed is handed
 * to its user while the process keeps running:
 *
 *   timer ─▶ check ─▶ ensurePki (no new CA) ─┬─ serving pair changed ─▶ onServing(pair)
 *     ▲                                       │                          (server.setSecureContext)
 *     │                                       └─ kubelet-client changed ─▶ onAgentClient(pair)
 *     └──────────── next timer, after the check finished ◀──────────────┘
 *
 * New TLS connections get the new serving certificate; connections already open keep the one
 * they negotiated (a watch that started yesterday goes on streaming). Serving files the operator
 * gave (`--tls-cert-file`) are not ours to re-issue: they are re-read on every check and swapped
 * in when they change and form a valid pair, as kube-apiserver reloads its files.
 */
import { readFile } from 'node:fs/promises';
import { noopLogger, systemClock, type Clock, type Logger } from '@nodelet/base';
import { describeCertificate, type KeyPairPem } from './certs.js';
import { pairMismatch } from './pair.js';
import { ensurePki, type EnsurePkiOptions, type Pki } from './pki.js';

export const DEFAULT_ROTATION_CHECK_MS = 3600_000;

export interface CertRotationOptions {
  /** As passed to ensurePki at start; `createCa` is forced off. */
  pki: EnsurePkiOptions;
  /** The pairs in use now (ensurePki's result at start). */
  current: Pki;
  /** Operator-provided serving files and what was read from them at start: re-read, never re-issued. */
  servingFiles?: { certFile: string; keyFile: string; loaded: KeyPairPem };
  /** Default {@link DEFAULT_ROTATION_CHECK_MS}. */
  intervalMs?: number;
  clock?: Clock;
  logger?: Logger;
  /** Installs a new serving pair for new connections; throwing keeps the old one (logged). */
  onServing(pair: KeyPairPem): void;
  /** Installs a new client pair for new connections to agents. */
  onAgentClient(pair: KeyPairPem): void;
  /** A re-issued admin pair: rewrite the admin kubeconfig (the old certificate stays valid until it expires). */
  onAdmin?(pair: KeyPairPem): Promise<void>;
}

export interface CertRotation {
  /** Runs one check now, after any check in progress. Rejects with what went wrong. */
  check(): Promise<void>;
  /** Stops the timer and waits for a check in progress. Idempotent. */
  close(): Promise<void>;
}

/** Starts the periodic check; the first runs one interval after start (start already checked). */
export function startCertRotation(o: CertRotationOptions): CertRotation {
  const clock = o.clock ?? systemClock;
  const log = o.logger ?? noopLogger;
  const intervalMs = o.intervalMs ?? DEFAULT_ROTATION_CHECK_MS;
  let serving = o.servingFiles ? undefined : o.current.serving;
  let servingFromFiles = o.servingFiles?.loaded;
  let agentClient = o.current.agentClient;
  let admin = o.current.admin;
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  let cancelTimer: () => void = () => undefined;

  async function runCheck(): Promise<void> {
    const pki = await ensurePki({ ...o.pki, createCa: false, logger: log });
    if (serving && !samePair(serving, pki.serving)) {
      install('serving', () => o.onServing(pki.serving), pki.serving);
      serving = pki.serving;
    }
    if (o.servingFiles) await reloadServingFiles(o.servingFiles);
    if (!samePair(agentClient, pki.agentClient)) {
      install('apiserver-kubelet-client', () => o.onAgentClient(pki.agentClient), pki.agentClient);
      agentClient = pki.agentClient;
    }
    if (!samePair(admin, pki.admin)) {
      await o.onAdmin?.(pki.admin);
      install('admin', () => undefined, pki.admin);
      admin = pki.admin;
    }
  }

  async function reloadServingFiles(files: { certFile: string; keyFile: string }): Promise<void> {
    const pair = { certPem: await readFile(files.certFile, 'utf8'), keyPem: await readFile(files.keyFile, 'utf8') };
    if (servingFromFiles && samePair(servingFromFiles, pair)) return;
    const why = pairMismatch(pair.certPem, pair.keyPem);
    if (why) {
      // Likely caught between the operator's two writes; the next check sees the finished pair.
      log.warn({ certFile: files.certFile, keyFile: files.keyFile, reason: why }, 'Serving certificate files changed but do not form a pair; keeping the current one');
      return;
    }
    install('serving', () => o.onServing(pair), pair);
    servingFromFiles = pair;
  }

  function install(which: string, apply: () => void, pair: KeyPairPem): void {
    apply();
    const d = describeCertificate(pair.certPem);
    log.info({ certificate: which, notAfter: new Date(d.notAfter).toISOString() }, 'Certificate rotated');
  }

  const check = (): Promise<void> => {
    const run = queue.then(runCheck);
    queue = run.catch(() => undefined); // runCheck logs its own failures; the queue only orders the checks
    return run;
  };

  const schedule = (): void => {
    cancelTimer = clock.setTimer(intervalMs, () => {
      if (closed) return;
      check()
        .catch((err: unknown) => log.warn({ err }, 'Certificate check failed; will retry'))
        .finally(() => {
          if (!closed) schedule();
        });
    });
  };
  schedule();

  let closing: Promise<void> | undefined;
  return {
    check,
    close: () =>
      (closing ??= (async () => {
        closed = true;
        cancelTimer();
        await queue;
      })()),
  };
}

function samePair(a: KeyPairPem, b: KeyPairPem): boolean {
  return a.certPem === b.certPem && a.keyPem === b.keyPem;
}
