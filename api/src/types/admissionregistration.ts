/**
 * admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and ValidatingWebhookConfiguration:
 * the admission webhooks the API server calls on writes. Names as in k8s.io/api/admissionregistration/v1.
 */
import type { KubeObject, LabelSelector } from './meta.js';

/** A Service a webhook is reached through (port defaults to 443). */
export interface WebhookServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

/** Where a webhook listens: exactly one of `url` and `service`; `caBundle` (base64 PEM) verifies its certificate. */
export interface WebhookClientConfig {
  url?: string;
  service?: WebhookServiceReference;
  caBundle?: string;
}

/** Operations on resources a webhook is called for. */
export interface RuleWithOperations {
  operations?: Array<'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | '*'>;
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: 'Cluster' | 'Namespaced' | '*';
}

/** The fields both webhook kinds share. */
export interface ValidatingWebhook {
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: 'Ignore' | 'Fail';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects: 'None' | 'NoneOnDryRun' | 'Some' | 'Unknown';
  timeoutSeconds?: number;
  admissionReviewVersions: string[];
  matchConditions?: Array<{ name: string; expression: string }>;
}

export interface MutatingWebhook extends ValidatingWebhook {
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export interface MutatingWebhookConfiguration extends KubeObject {
  apiVersion?: 'admissionregistration.k8s.io/v1';
  kind?: 'MutatingWebhookConfiguration';
  webhooks?: MutatingWebhook[];
}

export interface ValidatingWebhookConfiguration extends KubeObject {
  apiVersion?: 'admissionregistration.k8s.io/v1';
  kind?: 'ValidatingWebhookConfiguration';
  webhooks?: ValidatingWebhook[];
}
