/**
 * Renewal of the node's own API credential before it expires (kubelet's `rotateCertificates`,
 * for nodelet's bearer credentials): the agent asks for a new one with its current one at a
 * random 70–90 % of its lifetime, writes it where the kubeconfig takes it from
 * (@nodelet/api node-credential-file.ts), and switches its client to it. The server keeps the
 * old one valid for 10 minutes, so no request fails in between.
 *
 *   run(): whoami ── not system:node:<node> ──▶ off (an admin's or a bootstrap kubeconfig is not ours to rotate)
 *            │
 *            ├─ lifetime unknown (no record, or a crash between writes) ──▶ renew now, to learn it
 *            ▼
 *      ┌─▶ sleep until the rotation deadline
 *      │   renew ─▶ write token, then its lifetime record ─▶ onRotated(token)
 *      └── failure: warn and back off 2 s … 5 min; past expiry, or refused (401): error, saying how to re-join
 *   (a server that gives no expiry: renewed once, then never again)
 *
 * One run() per manager. The write happens before the client switches: a crash after the server
 * issued but before the file was written leaves the old credential, which works for the 10-minute
 * overlap, and the restarted agent renews at once (its deadline has passed).
 */
import { Backoff, describeError, errCode, hasCode, isAbortError, type Clock, type Logger } from '@nodelet/base';
import type { CredentialLifetime } from '@nodelet/api/agent';
import { rotationDeadline, sleepUntil } from './rotation-deadline.js';

export interface NodeCredentialManagerOptions {
  nodeName: string;
  /** The user the current credential authenticates as (SelfSubjectReview). */
  whoami(signal: AbortSignal): Promise<string>;
  /** The credential on disk now, with its lifetime when recorded. */
  read(): Promise<{ token: string; lifetime?: CredentialLifetime }>;
  /** Asks the server for a new credential with the current one. */
  renew(signal: AbortSignal): Promise<{ token: string; expiresAt?: number }>;
  /** Replaces the credential on disk (token first, then its lifetime record). */
  write(token: string, lifetime: CredentialLifetime | undefined): Promise<void>;
  /** Switches the API client to the new token. */
  onRotated(token: string): void;
  clock: Clock;
  random: () => number;
  log: Logger;
  backoff?: { initialMs: number; maxMs: number };
}

export class NodeCredentialManager {
  readonly #o: NodeCredentialManagerOptions;
  readonly #backoff: Backoff;
  #lifetime?: CredentialLifetime;
  #deadline = 0;

  constructor(o: NodeCredentialManagerOptions) {
    this.#o = o;
    const b = o.backoff ?? { initialMs: 2000, maxMs: 5 * 60_000 };
    this.#backoff = new Backoff({ ...b, clock: o.clock, resetAfterMs: Number.MAX_SAFE_INTEGER });
  }

  /** The lifetime of the credential in use and when it will be renewed, once known. */
  get current(): (CredentialLifetime & { deadline: number }) | undefined {
    return this.#lifetime && { ...this.#lifetime, deadline: this.#deadline };
  }

  /** Renews until `signal` aborts (then resolves); returns early when the credential is not a node's. */
  async run(signal: AbortSignal): Promise<void> {
    try {
      if (!(await this.#isNodeCredential(signal))) return;
      const { lifetime } = await this.#o.read();
      if (lifetime) this.#adopt(lifetime);
      else this.#o.log.info({ node: this.#o.nodeName }, 'Node credential lifetime not recorded; renewing it now to learn it');
      for (;;) {
        if (this.#lifetime) await sleepUntil(this.#o.clock, this.#deadline, signal);
        try {
          await this.#rotate(signal);
          this.#backoff.reset();
        } catch (err) {
          if (signal.aborted) return;
          const retryInMs = this.#backoff.next();
          this.#report(err, retryInMs);
          await this.#o.clock.sleep(retryInMs, signal);
          continue;
        }
        if (!this.#lifetime) return;
      }
    } catch (err) {
      if (signal.aborted && isAbortError(err)) return;
      throw err;
    }
  }

  async #isNodeCredential(signal: AbortSignal): Promise<boolean> {
    const want = `system:node:${this.#o.nodeName}`;
    for (;;) {
      try {
        const user = await this.#o.whoami(signal);
        this.#backoff.reset();
        if (user === want) return true;
        this.#o.log.info({ user, want }, 'Node credential rotation off: the kubeconfig does not authenticate as this node');
        return false;
      } catch (err) {
        if (signal.aborted) throw err;
        const retryInMs = this.#backoff.next();
        this.#o.log.warn({ err: describeError(err), code: errCode(err), retryInMs }, 'Cannot tell who the kubeconfig authenticates as; will retry');
        await this.#o.clock.sleep(retryInMs, signal);
      }
    }
  }

  async #rotate(signal: AbortSignal): Promise<void> {
    const issuedAt = this.#o.clock.now();
    const next = await this.#o.renew(signal);
    const lifetime = next.expiresAt !== undefined ? { issuedAt, expiresAt: next.expiresAt } : undefined;
    await this.#o.write(next.token, lifetime);
    this.#o.onRotated(next.token);
    if (lifetime) {
      this.#adopt(lifetime);
      this.#o.log.info({ node: this.#o.nodeName, expirationTimestamp: iso(lifetime.expiresAt), rotationDeadline: iso(this.#deadline) }, 'Node credential rotated');
    } else {
      // A server that does not say when it expires: nothing to schedule (run() stops).
      this.#lifetime = undefined;
      this.#o.log.info({ node: this.#o.nodeName }, 'Node credential rotated; the server gave no expiry, so it will not be renewed again');
    }
  }

  #report(err: unknown, retryInMs: number): void {
    const expired = this.#lifetime !== undefined && this.#o.clock.now() >= this.#lifetime.expiresAt;
    const fields = { err: describeError(err), code: errCode(err), retryInMs, node: this.#o.nodeName };
    if (expired || hasCode(err, 'ERR_UNAUTHENTICATED')) {
      this.#o.log.error({
        ...fields,
        ...(this.#lifetime ? { expirationTimestamp: iso(this.#lifetime.expiresAt) } : {}),
        fix: `on the server: nodelet token create --node-name ${this.#o.nodeName}; on this node: nodelet join <server> --token <token> --ca-cert-hash <hash>`,
      }, expired ? 'Node credential expired; re-join this node' : 'Node credential refused by the API server; re-join this node');
    } else {
      this.#o.log.warn(fields, 'Node credential renewal failed; will retry');
    }
  }

  #adopt(lifetime: CredentialLifetime): void {
    this.#lifetime = lifetime;
    this.#deadline = rotationDeadline(lifetime.issuedAt, lifetime.expiresAt, this.#o.random);
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();
