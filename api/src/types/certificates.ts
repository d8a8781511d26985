/** certificates.k8s.io/v1 CertificateSigningRequest (field names upstream's). */
import type { KubeObject, Time } from './meta.js';

/** The signers kube-controller-manager (here: nodelet server) signs for. */
export const SIGNER_KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
export const SIGNER_KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
export const SIGNER_KUBELET_SERVING = 'kubernetes.io/kubelet-serving';

export type KeyUsage =
  | 'signing' | 'digital signature' | 'content commitment' | 'key encipherment' | 'key agreement' | 'data encipherment'
  | 'cert sign' | 'crl sign' | 'encipher only' | 'decipher only' | 'any' | 'server auth' | 'client auth' | 'code signing'
  | 'email protection' | 's/mime' | 'ipsec end system' | 'ipsec tunnel' | 'ipsec user' | 'timestamping' | 'ocsp signing'
  | 'microsoft sgc' | 'netscape sgc';

export interface CertificateSigningRequestSpec {
  /** base64 of a PEM "CERTIFICATE REQUEST". */
  request: string;
  signerName: string;
  expirationSeconds?: number;
  usages?: KeyUsage[];
  /** Set by the API server from the requester; ignored on create. */
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface CertificateSigningRequestCondition {
  type: 'Approved' | 'Denied' | 'Failed';
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastUpdateTime?: Time;
  lastTransitionTime?: Time;
}

export interface CertificateSigningRequest extends KubeObject {
  apiVersion?: 'certificates.k8s.io/v1';
  kind?: 'CertificateSigningRequest';
  spec: CertificateSigningRequestSpec;
  status?: { conditions?: CertificateSigningRequestCondition[]; certificate?: string };
}
