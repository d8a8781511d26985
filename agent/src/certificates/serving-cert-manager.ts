/**
 * The node API's serving certificate from the cluster (kubelet's `serverTLSBootstrap` and its
 * serving certificate manager): a key and a CSR for `system:node:<node>` / `system:nodes` with
 * the names and addresses the Node reports, submitted with the node's own credential to the
 * `kubernetes.io/kubelet-serving` signer (the first by an admin, renewals by the cluster's approver),
 * stored as one PEM file (pem-pair-store.ts), swapped into the running server, and renewed at
 * a random 70–90 % of its lifetime (from notBefore, or from when it arrived if that is later).
 *
 *   initial() ── stored pair valid, of the cluster CA ──▶ serve it
 *             └─ none / expired / mismatched ──────────▶ serve self-signed (logged, with why)
 *
 *   run():  ┌─▶ wait: rotation deadline, or the Node's names no longer match (checked every recheckMs)
 *           │   wait for the Node's names (registration)
 *           │   new key + CSR ─▶ request (waits for approval and signing) ─▶ store ─▶ install
 *           └── failure: warn (saying the self-signed one is still served), back off 2 s … 5 min
 *
 * One run() per manager; `install` is called from it only. Cancellation: the signal ends waits
 * and the request in flight; a pair is installed only after it was stored.
 */
import { generateKeyAndCsr } from '@nodelet/api/agent';
import { Backoff, describeError, errCode, isAbortError, type Clock, type Logger } from '@nodelet/base';
import type { PemPairStore } from './pem-pair-store.js';
import { rotationDeadline, sleepUntil } from './rotation-deadline.js';
import { coversExactly, inspectCertificate, issuedBy, pairProblem, type CertificateInfo, type ServingNames } from './x509.js';

export interface ServingPair {
  cert: string;
  key: string;
}

export interface ServingCertManagerOptions {
  store: PemPairStore;
  nodeName: string;
  /** The names and addresses the registered Node reports; undefined until it is registered. */
  names(): ServingNames | undefined;
  /** Submits a kubelet-serving CSR and resolves with the issued certificate (PEM chain). */
  request(csrPem: string, signal: AbortSignal): Promise<string>;
  /** The self-signed pair to serve until the cluster signs one. */
  selfSigned(): Promise<ServingPair>;
  /** The cluster CA (PEM): a stored certificate it did not sign (another cluster's) is not reused. */
  clusterCa?: string;
  clock: Clock;
  random: () => number;
  log: Logger;
  /** How often the Node's names are compared with the certificate's (default 1 min). */
  recheckMs?: number;
  /** Retry delays after a failed request (default 2 s doubling to 5 min). */
  backoff?: { initialMs: number; maxMs: number };
}

interface Current {
  info: CertificateInfo;
  deadline: number;
}

/** How often the names are looked for until the Node is registered: an in-memory read, so often. */
const NAMES_POLL_MS = 100;

export class ServingCertManager {
  readonly #o: ServingCertManagerOptions;
  readonly #backoff: Backoff;
  #current?: Current;

  constructor(o: ServingCertManagerOptions) {
    this.#o = o;
    const b = o.backoff ?? { initialMs: 2000, maxMs: 5 * 60_000 };
    this.#backoff = new Backoff({ ...b, clock: o.clock, resetAfterMs: Number.MAX_SAFE_INTEGER });
  }

  /** Validity and rotation deadline of the cluster-signed certificate in use; undefined while self-signed. */
  get current(): { notBefore: number; notAfter: number; deadline: number } | undefined {
    const c = this.#current;
    return c && { notBefore: c.info.notBefore, notAfter: c.info.notAfter, deadline: c.deadline };
  }

  /** The pair to start serving with: the stored one when it can be served, else the self-signed one. */
  async initial(): Promise<ServingPair> {
    const loaded = await this.#o.store.load();
    let why: string;
    if (loaded.status === 'ok') {
      const { pair } = loaded;
      const now = this.#o.clock.now();
      if (pair.info.notAfter <= now) why = `the stored certificate expired at ${new Date(pair.info.notAfter).toISOString()}`;
      else if (this.#o.clusterCa && !issuedBy(pair.certPem, this.#o.clusterCa)) why = 'the stored certificate was not signed by the cluster CA';
      else {
        this.#adopt(pair.info);
        this.#o.log.info({ path: pair.path, notAfter: iso(pair.info.notAfter), rotationDeadline: iso(this.#current!.deadline) }, 'Serving certificate loaded');
        return { cert: pair.certPem, key: pair.keyPem };
      }
    } else {
      why = loaded.status === 'missing' ? 'no certificate has been issued to this node yet' : `the stored certificate cannot be used: ${loaded.why}`;
    }
    this.#o.log.warn({ reason: why, path: this.#o.store.currentPath },
      'Serving with a self-signed certificate until the cluster signs one; the API server cannot verify it, so kubectl logs/exec to this node fail until then');
    return this.#o.selfSigned();
  }

  /** Requests and renews until `signal` aborts (then resolves). `install` swaps a new pair into the server. */
  async run(signal: AbortSignal, install: (pair: ServingPair) => void): Promise<void> {
    try {
      for (;;) {
        await this.#waitForRenewal(signal);
        try {
          await this.#renew(signal, install);
          this.#backoff.reset();
        } catch (err) {
          if (signal.aborted) return;
          const retryInMs = this.#backoff.next();
          const fields = { err: describeError(err), code: errCode(err), retryInMs };
          if (this.#current) this.#o.log.warn(fields, 'Serving certificate renewal failed; will retry');
          else this.#o.log.warn(fields, 'Serving certificate not issued yet; still serving the self-signed certificate, will retry');
          await this.#o.clock.sleep(retryInMs, signal);
        }
      }
    } catch (err) {
      if (signal.aborted && isAbortError(err)) return;
      throw err;
    }
  }

  /** Returns when a certificate should be requested: none yet, deadline reached, or the names changed. */
  async #waitForRenewal(signal: AbortSignal): Promise<void> {
    const recheck = this.#o.recheckMs ?? 60_000;
    for (;;) {
      const c = this.#current;
      if (!c) return;
      const names = this.#o.names();
      if (names && !coversExactly(c.info, names)) {
        this.#o.log.info({ want: names, have: { dnsNames: c.info.dnsNames, ips: c.info.ips } }, 'Node names changed; requesting a new serving certificate');
        return;
      }
      if (this.#o.clock.now() >= c.deadline) return;
      await sleepUntil(this.#o.clock, Math.min(c.deadline, this.#o.clock.now() + recheck), signal);
    }
  }

  async #renew(signal: AbortSignal, install: (pair: ServingPair) => void): Promise<void> {
    let names = this.#o.names();
    while (!names) {
      await this.#o.clock.sleep(NAMES_POLL_MS, signal);
      names = this.#o.names();
    }
    const { keyPem, csrPem } = await generateKeyAndCsr({ commonName: `system:node:${this.#o.nodeName}`, organizations: ['system:nodes'], dnsNames: names.dnsNames, ips: names.ips });
    const certPem = await this.#o.request(csrPem, signal);
    const why = pairProblem(certPem, keyPem);
    if (why) throw new Error(`the issued certificate does not match the request: ${why}`);
    const info = inspectCertificate(certPem);
    const path = await this.#o.store.update(certPem, keyPem);
    install({ cert: certPem, key: keyPem });
    const first = !this.#current;
    // Counted from now, not notBefore: signers back-date notBefore (5 min here and upstream), which
    // for a short-lived certificate would put the deadline in the past and renew in a loop.
    this.#adopt(info, this.#o.clock.now());
    this.#o.log.info({ path, notAfter: iso(info.notAfter), rotationDeadline: iso(this.#current!.deadline), dnsNames: info.dnsNames, ips: info.ips },
      first ? 'Serving certificate issued by the cluster; now serving it' : 'Serving certificate rotated');
  }

  #adopt(info: CertificateInfo, receivedAt = info.notBefore): void {
    this.#current = { info, deadline: rotationDeadline(Math.max(info.notBefore, receivedAt), info.notAfter, this.#o.random) };
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
