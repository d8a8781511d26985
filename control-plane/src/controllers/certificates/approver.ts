/**
 * Automatic approval of node certificate requests:
 *
 *   kube-apiserver-client-kubelet   (kube-controller-manager's csrapproving) a kubelet client
 *        request is approved when a SubjectAccessReview says its requester may create
 *        certificatesigningrequests/selfnodeclient (renewing its own name) or /nodeclient
 *        (bootstrapping any name) — the bootstrap roles grant those to system:nodes and
 *        bootstrappers only when an admin binds them
 *   kubelet-serving                  (nodelet; upstream leaves these to the admin) a serving
 *        request is approved only when it comes from that node itself and asks for nothing
 *        the node could choose: its Node name alone, or a renewal of the names and addresses
 *        of the cluster-CA certificate its agent serves now (serving-names.ts). The addresses
 *        in the Node's status are the node's own word and vouch for nothing; Service names,
 *        Service IPs, loopback and link-local are never approved. Anything else stays pending
 *        for `kubectl certificate approve` (an agent's first certificate names its IP).
 *
 * Approval goes through the /approval subresource, so it is authorized like any other
 * (`approve` on the signer).
 */
import { CERTIFICATESIGNINGREQUESTS, NODES, rfc3339, SERVICES, SIGNER_KUBELET_CLIENT, SIGNER_KUBELET_SERVING, type CertificateSigningRequest, type KubeObject, type ResourceType } from '@nodelet/api';
import { parseCsr } from '../../pki/csr.js';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { csrState, kubeletClientProblem, kubeletServingProblem, NODE_USER_PREFIX } from './csr-checks.js';
import { isReservedName, reservedIpProblem, servedCertificate, type ServedCertificate } from './serving-names.js';

const SARS: ResourceType = { group: 'authorization.k8s.io', version: 'v1', kind: 'SubjectAccessReview', plural: 'subjectaccessreviews', singular: 'subjectaccessreview', namespaced: false };

abstract class ApproverBase extends ControllerBase {
  protected readonly csrs;

  constructor(d: ControllerDeps, name: string, signer: string) {
    super(d, { name, workers: 1 });
    this.csrs = this.watch(CERTIFICATESIGNINGREQUESTS, (c) => (c.spec?.signerName === signer && csrState(c) === 'pending' ? c.metadata.name! : undefined), ['add', 'update']);
  }

  protected async approve(csr: CertificateSigningRequest, message: string, signal: AbortSignal): Promise<void> {
    const now = rfc3339(this.clock.now());
    const conditions = [...(csr.status?.conditions ?? []), { type: 'Approved' as const, status: 'True' as const, reason: 'AutoApproved', message, lastUpdateTime: now, lastTransitionTime: now }];
    await this.client.update(CERTIFICATESIGNINGREQUESTS, { ...csr, status: { ...csr.status, conditions } }, { subresource: 'approval', signal });
    this.log.info({ csr: csr.metadata.name, requester: csr.spec.username }, 'Approved certificate signing request');
  }

}

export class KubeletClientCsrApprover extends ApproverBase {
  constructor(d: ControllerDeps) {
    super(d, 'csrapproving', SIGNER_KUBELET_CLIENT);
  }

  async reconcile(name: string, signal: AbortSignal): Promise<void> {
    const csr = this.csrs.get(name);
    if (!csr || csrState(csr) !== 'pending' || csr.spec.signerName !== SIGNER_KUBELET_CLIENT) return;
    const parsed = await parseCsr(Buffer.from(csr.spec.request, 'base64').toString('utf8')).catch(() => undefined); // unparseable: not approved here, left pending for a human
    if (!parsed || kubeletClientProblem(parsed, csr.spec.usages ?? [])) return;
    const self = csr.spec.username === parsed.commonName;
    const sub = self ? 'selfnodeclient' : 'nodeclient';
    const review = (await this.client.create(SARS, {
      apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', metadata: {},
      spec: { user: csr.spec.username, groups: csr.spec.groups ?? [], ...(csr.spec.uid ? { uid: csr.spec.uid } : {}), ...(csr.spec.extra ? { extra: csr.spec.extra } : {}),
        resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create', subresource: sub } },
    } as KubeObject, { signal })) as { status?: { allowed?: boolean } };
    if (!review.status?.allowed) return;
    await this.approve(csr, self ? 'Auto approving self kubelet client certificate after SubjectAccessReview.' : 'Auto approving kubelet client certificate after SubjectAccessReview.', signal);
  }
}

/** How often a pending serving request is checked again as a renewal: from 30 s, a quarter of its age, up to 5 min. */
const RENEWAL_RECHECK_MS = 30_000;
const RENEWAL_RECHECK_MAX_MS = 5 * 60_000;

export interface KubeletServingApproverDeps extends ControllerDeps {
  /** The certificate served at ip:port if it verifies (serving-names.ts; injected by tests). */
  servedCertificate?: (ip: string, port: number, ca: string) => Promise<ServedCertificate | undefined>;
}

export class KubeletServingCsrApprover extends ApproverBase {
  readonly #nodes;
  readonly #services;
  readonly #served: NonNullable<KubeletServingApproverDeps['servedCertificate']>;
  readonly #ca: string | undefined;

  constructor(d: KubeletServingApproverDeps) {
    super(d, 'kubelet-serving-approver', SIGNER_KUBELET_SERVING);
    this.#nodes = this.informer(NODES);
    this.#services = this.informer(SERVICES);
    this.#served = d.servedCertificate ?? servedCertificate;
    this.#ca = d.options.rootCaPem;
    // A request can arrive before this informer has its Node (an agent asks right after
    // registering) or before the Node reports an address it names: look again when it changes.
    const addresses = (n: { status?: { addresses?: unknown } }): string => JSON.stringify(n.status?.addresses ?? []);
    this.handle(this.#nodes, {
      onAdd: (n) => this.#requeueFor(n.metadata.name!),
      onUpdate: (o, n) => (addresses(o) !== addresses(n) ? this.#requeueFor(n.metadata.name!) : undefined),
    });
  }

  #requeueFor(nodeName: string): void {
    for (const c of this.csrs.list()) {
      if (c.spec?.signerName === SIGNER_KUBELET_SERVING && c.spec.username === `${NODE_USER_PREFIX}${nodeName}` && csrState(c) === 'pending') this.queue.add(c.metadata.name!);
    }
  }

  async reconcile(name: string, signal: AbortSignal): Promise<{ requeueAfterMs: number } | undefined> {
    const csr = this.csrs.get(name);
    if (!csr || csrState(csr) !== 'pending' || csr.spec.signerName !== SIGNER_KUBELET_SERVING) return;
    const parsed = await parseCsr(Buffer.from(csr.spec.request, 'base64').toString('utf8')).catch(() => undefined); // unparseable: not approved here, left pending for a human
    if (!parsed || kubeletServingProblem(parsed, csr.spec.usages ?? [])) return;
    const nodeName = parsed.commonName.slice(NODE_USER_PREFIX.length);
    // Only the node itself, for itself.
    if (csr.spec.username !== parsed.commonName || !(csr.spec.groups ?? []).includes('system:nodes')) return;
    const node = this.#nodes.get(nodeName);
    if (!node) return;
    const leave = (why: string, names: string[]): void => this.log.info({ csr: name, node: nodeName, names, why }, 'Serving certificate request left for an admin');
    const serviceIps = new Set(this.#services.list().flatMap((svc) => [svc.spec?.clusterIP, ...(svc.spec?.clusterIPs ?? [])]).filter((ip): ip is string => !!ip && ip !== 'None'));
    const reserved = [...parsed.dnsNames.filter(isReservedName), ...parsed.ips.filter((ip) => reservedIpProblem(ip, serviceIps))];
    if (reserved.length) return void leave('Service names and IPs, loopback and link-local are never approved automatically', reserved);
    if (parsed.ips.length === 0 && parsed.dnsNames.every((n) => n === nodeName)) {
      await this.approve(csr, `Auto approving kubelet serving certificate: it names only Node "${nodeName}".`, signal);
      return;
    }
    // A renewal: the agent at each requested address serves a certificate of the cluster CA for
    // this node that already has every requested name.
    const port = Number(node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 10250);
    const covered = async (ip: string): Promise<boolean> => {
      const served = this.#ca ? await this.#served(ip, port, this.#ca) : undefined;
      return !!served && served.commonName === parsed.commonName && parsed.dnsNames.every((n) => served.dnsNames.includes(n)) && parsed.ips.every((i) => served.ips.includes(i));
    };
    if (parsed.ips.length === 0 || !(await Promise.all(parsed.ips.map(covered))).every(Boolean)) {
      leave('names other than the Node name that its current certificate does not have', [...parsed.dnsNames.filter((n) => n !== nodeName), ...parsed.ips]);
      // Looked at again while pending (an agent unreachable a moment ago may answer now), less
      // often the longer it waits: one that waits for an admin would otherwise be dialled forever.
      const ageMs = this.clock.now() - Date.parse(csr.metadata.creationTimestamp ?? '');
      return parsed.ips.length && this.#ca ? { requeueAfterMs: Math.min(RENEWAL_RECHECK_MAX_MS, Math.max(RENEWAL_RECHECK_MS, (ageMs || 0) / 4)) } : undefined;
    }
    await this.approve(csr, `Auto approving kubelet serving certificate renewal: the certificate Node "${nodeName}" serves has every name and address.`, signal);
  }
}
