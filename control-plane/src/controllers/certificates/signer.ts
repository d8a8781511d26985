/**
 * The CSR signer (kube-controller-manager's csrsigning) for kubernetes.io/kube-apiserver-client,
 * kube-apiserver-client-kubelet and kubelet-serving, with the cluster CA: an approved request
 * that meets its signer's rules (csr-checks.ts) gets a certificate valid for its
 * expirationSeconds, at most the cluster signing duration (1 year); one that does not gets a
 * Failed condition (SignerValidationFailure) and never a certificate. Signed through the
 * /status subresource (`sign` on the signer).
 *
 * Also the CSR cleaner: issued, denied and failed requests are removed after an hour, pending
 * ones after a day (upstream's csrcleaner durations).
 */
import { CERTIFICATESIGNINGREQUESTS, rfc3339, SIGNER_KUBE_APISERVER_CLIENT, SIGNER_KUBELET_CLIENT, SIGNER_KUBELET_SERVING, type CertificateSigningRequest } from '@nodelet/api';
import { hasCode } from '@nodelet/base';
import type { LoadedCa } from '../../pki/certs.js';
import { parseCsr, signCsr, type ParsedCsr } from '../../pki/csr.js';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import type { ReconcileResult } from '../runtime.js';
import { apiserverClientProblem, csrState, kubeletClientProblem, kubeletServingProblem } from './csr-checks.js';

export const DEFAULT_SIGNING_DURATION_MS = 365 * 24 * 3600_000;
const HOUR = 3600_000;

const RULES: Readonly<Record<string, (csr: ParsedCsr, usages: readonly string[]) => string | undefined>> = {
  [SIGNER_KUBE_APISERVER_CLIENT]: apiserverClientProblem,
  [SIGNER_KUBELET_CLIENT]: kubeletClientProblem,
  [SIGNER_KUBELET_SERVING]: kubeletServingProblem,
};

export interface CsrSignerDeps extends ControllerDeps {
  /** The cluster CA (loaded), or undefined when this process has no CA key (then nothing is signed). */
  ca: () => Promise<LoadedCa | undefined>;
  signingDurationMs?: number;
}

export class CsrSigner extends ControllerBase {
  readonly #ca: () => Promise<LoadedCa | undefined>;
  readonly #signingDurationMs: number | undefined;
  readonly #csrs;

  constructor(d: CsrSignerDeps) {
    super(d, { name: 'csrsigning', workers: 1 });
    this.#ca = d.ca;
    this.#signingDurationMs = d.signingDurationMs;
    this.#csrs = this.watch(CERTIFICATESIGNINGREQUESTS, (c) => c.metadata.name!, ['add', 'update']);
  }

  async reconcile(name: string, signal: AbortSignal): Promise<ReconcileResult | void> {
    const csr = this.#csrs.get(name);
    if (!csr) return;
    const state = csrState(csr);
    if (state === 'approved' && RULES[csr.spec.signerName]) await this.#sign(csr, signal);
    return this.#clean(csr, signal);
  }

  async #sign(csr: CertificateSigningRequest, signal: AbortSignal): Promise<void> {
    const ca = await this.#ca();
    if (!ca) return;
    const usages = csr.spec.usages ?? [];
    let problem: string | undefined;
    let parsed: ParsedCsr | undefined;
    try {
      parsed = await parseCsr(Buffer.from(csr.spec.request, 'base64').toString('utf8'));
      problem = RULES[csr.spec.signerName]!(parsed, usages);
    } catch (err) {
      problem = `invalid certificate request: ${(err as Error).message}`;
    }
    const now = this.clock.now();
    if (problem || !parsed) {
      const conditions = [...(csr.status?.conditions ?? []), { type: 'Failed' as const, status: 'True' as const, reason: 'SignerValidationFailure', message: problem, lastUpdateTime: rfc3339(now), lastTransitionTime: rfc3339(now) }];
      await this.client.update(CERTIFICATESIGNINGREQUESTS, { ...csr, status: { ...csr.status, conditions } }, { subresource: 'status', signal });
      this.log.warn({ csr: csr.metadata.name, problem }, 'Refused to sign certificate signing request');
      return;
    }
    const max = this.#signingDurationMs ?? DEFAULT_SIGNING_DURATION_MS;
    const wanted = csr.spec.expirationSeconds ? csr.spec.expirationSeconds * 1000 : max;
    const pem = await signCsr(ca, parsed, { usages, now, notAfter: now + Math.min(wanted, max) });
    await this.client.update(CERTIFICATESIGNINGREQUESTS, { ...csr, status: { ...csr.status, certificate: Buffer.from(pem).toString('base64') } }, { subresource: 'status', signal });
    this.log.info({ csr: csr.metadata.name, signer: csr.spec.signerName, subject: parsed.commonName }, 'Signed certificate signing request');
  }

  async #clean(csr: CertificateSigningRequest, signal: AbortSignal): Promise<ReconcileResult | void> {
    const created = Date.parse(csr.metadata.creationTimestamp ?? '') || this.clock.now();
    const state = csrState(csr);
    const keep = state === 'pending' || state === 'approved' ? 24 * HOUR : HOUR;
    const left = created + keep - this.clock.now();
    if (left > 0) return { requeueAfterMs: left };
    try {
      await this.client.delete(CERTIFICATESIGNINGREQUESTS, csr.metadata.name!, { preconditions: { uid: csr.metadata.uid }, signal });
    } catch (err) {
      if (!hasCode(err, 'ERR_NOT_FOUND')) throw err;
    }
  }
}
