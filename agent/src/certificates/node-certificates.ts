/**
 * Wires the agent's two credentials to the API server (the I/O edge of the managers):
 *
 *   serving certificate   tlsCertFile/tlsPrivateKeyFile when configured (served as they are);
 *                         else, with serverTLSBootstrap, ServingCertManager over
 *                         `<root-dir>/pki/kubelet-server-current.pem`; else self-signed.
 *   node credential       with rotateCertificates and a token in the kubeconfig, NodeCredentialManager
 *                         over that token (file or inline) and `POST nodecredentials`.
 *
 * Files under `<root-dir>/pki/` are described in docs/agent.md.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  locateCredential, readCredential, requestCertificate, requestNodeCredential, SIGNER_KUBELET_SERVING, writeCredential,
  type ApiClient, type KubeObject, type Node, type ResourceType,
} from '@nodelet/api/agent';
import { describeError, type Clock, type Logger } from '@nodelet/base';
import type { AgentConfig } from '../config/config.js';
import { loadOrCreateServingCert } from '../server/serving-cert.js';
import { NodeCredentialManager } from './node-credential-manager.js';
import { PemPairStore } from './pem-pair-store.js';
import { ServingCertManager, type ServingPair } from './serving-cert-manager.js';
import type { ServingNames } from './x509.js';

const SELF_SUBJECT_REVIEWS: ResourceType = {
  group: 'authentication.k8s.io', version: 'v1', kind: 'SelfSubjectReview', plural: 'selfsubjectreviews', singular: 'selfsubjectreview', namespaced: false,
};

/** kubelet's certificateWaitTimeout: how long one CSR may wait for approval and signing. */
export const CSR_WAIT_MS = 15 * 60_000;

export interface NodeCertificatesOptions {
  config: AgentConfig;
  api: ApiClient;
  clock: Clock;
  random: () => number;
  log: Logger;
  internalIP: string;
  /** The registered Node (its status.addresses name the serving certificate). */
  node: () => Node | undefined;
  /** The kubeconfig the API client was made from (where a rotated credential is written). */
  kubeconfigPath?: string;
}

export interface ServingCertificate {
  initial: ServingPair;
  /** Requests and renews while the agent runs; absent for configured files and self-signed mode. */
  manager?: ServingCertManager;
}

/** The names a serving certificate request carries: the node name and the Node's own addresses. */
export function servingNames(nodeName: string, node: Node | undefined): ServingNames | undefined {
  const addresses = node?.status?.addresses;
  if (!addresses?.length) return undefined;
  const dns = addresses.filter((a) => a.type === 'Hostname' || a.type === 'InternalDNS' || a.type === 'ExternalDNS').map((a) => a.address);
  const ips = addresses.filter((a) => a.type === 'InternalIP' || a.type === 'ExternalIP').map((a) => a.address);
  return { dnsNames: [...new Set([nodeName, ...dns])], ips: [...new Set(ips)] };
}

export async function servingCertificate(o: NodeCertificatesOptions): Promise<ServingCertificate> {
  const c = o.config;
  const log = o.log.child({ component: 'serving-cert' });
  if (c.tlsCertFile && c.tlsPrivateKeyFile) {
    const pair = await loadOrCreateServingCert({ certFile: c.tlsCertFile, keyFile: c.tlsPrivateKeyFile, rootDir: c.rootDir, nodeName: c.nodeName, ips: [] });
    log.info({ certFile: c.tlsCertFile }, 'Serving the configured certificate');
    return { initial: pair };
  }
  const selfSigned = (): Promise<ServingPair> => loadOrCreateServingCert({ rootDir: c.rootDir, nodeName: c.nodeName, ips: [o.internalIP, '127.0.0.1'] });
  if (!c.serverTLSBootstrap) {
    log.warn({ path: join(c.rootDir, 'pki', 'nodelet.crt') }, 'Serving a self-signed certificate (serverTLSBootstrap is off): the API server verifies agents only with --kubelet-certificate-authority naming it');
    return { initial: await selfSigned() };
  }
  const clusterCa = c.clientCAFile ? await readFile(c.clientCAFile, 'utf8').catch(() => undefined) : undefined; // unreadable: no cluster CA to check against, the self-check below just does without it
  const manager = new ServingCertManager({
    store: new PemPairStore({ dir: join(c.rootDir, 'pki'), pairName: 'kubelet-server', clock: o.clock }),
    nodeName: c.nodeName,
    names: () => servingNames(c.nodeName, o.node()),
    request: async (csrPem, signal) => {
      const r = await requestCertificate(o.api, {
        csrPem, signerName: SIGNER_KUBELET_SERVING, usages: ['digital signature', 'server auth'], generateName: 'csr-', timeoutMs: CSR_WAIT_MS, pollMs: 1000, signal,
        onCreated: async (csr) => log.info({ csr: csr.metadata.name }, 'Serving certificate requested'),
      });
      return r.certPem;
    },
    selfSigned,
    ...(clusterCa ? { clusterCa } : {}),
    clock: o.clock,
    random: o.random,
    log,
  });
  return { initial: await manager.initial(), manager };
}

/** The credential renewal loop, or undefined (logged why) when there is nothing to renew. */
export async function nodeCredentialRotation(o: NodeCertificatesOptions): Promise<NodeCredentialManager | undefined> {
  const log = o.log.child({ component: 'node-credential' });
  if (!o.config.rotateCertificates) return undefined;
  if (!o.kubeconfigPath) return undefined;
  const loc = await locateCredential(o.kubeconfigPath).catch((err: unknown) => {
    log.warn({ kubeconfig: o.kubeconfigPath, err: describeError(err) }, 'Node credential rotation off: cannot read the kubeconfig');
    return undefined;
  });
  if (!loc) {
    log.info({ kubeconfig: o.kubeconfigPath }, 'Node credential rotation off: the kubeconfig holds no bearer token');
    return undefined;
  }
  const nodeName = o.config.nodeName;
  return new NodeCredentialManager({
    nodeName,
    whoami: async (signal) => {
      const r = (await o.api.create(SELF_SUBJECT_REVIEWS, { metadata: {} } as KubeObject, { signal })) as KubeObject & { status?: { userInfo?: { username?: string } } };
      return r.status?.userInfo?.username ?? '';
    },
    read: () => readCredential(loc),
    renew: (signal) => requestNodeCredential(o.api, nodeName, { signal }),
    write: (token, lifetime) => writeCredential(loc, token, lifetime),
    // A token file is re-read on the next request (and later edits of it are picked up); an inline token is set.
    onRotated: (token) => (loc.kind === 'tokenFile' ? o.api.reloadToken() : o.api.setToken(token)),
    clock: o.clock,
    random: o.random,
    log,
  });
}
