/** Schemas of admissionregistration.k8s.io/v1 MutatingWebhookConfiguration and ValidatingWebhookConfiguration. */
import { definitions, int32, kind, list, listOf, obj, ref, str, strings, type JsonSchema } from './dsl.js';

/** The fields of a webhook both kinds share; the mutating one adds reinvocationPolicy. */
const webhookFields = (what: string): Record<string, JsonSchema> => ({
  name: str(`Name of the ${what} webhook, a fully qualified domain name (at least three segments); unique in its configuration.`),
  clientConfig: ref('admissionregistration.WebhookClientConfig', 'How the API server reaches the webhook.'),
  rules: listOf('admissionregistration.RuleWithOperations', 'Operations on resources the webhook is called for; it is called when any rule matches.', { type: 'atomic' }),
  failurePolicy: str('What an error calling the webhook does: `Fail` (default: the request fails) or `Ignore`.', { enum: ['Fail', 'Ignore'] }),
  matchPolicy: str('`Equivalent` (default: a request for the same resource in another served version matches too) or `Exact`.', { enum: ['Equivalent', 'Exact'] }),
  namespaceSelector: ref('meta.LabelSelector', 'Labels of the namespace of the object (of the object itself for a Namespace); default `{}`: every namespace.'),
  objectSelector: ref('meta.LabelSelector', 'Labels of the object (old or new); default `{}`: every object.'),
  sideEffects: str('Whether calling the webhook has effects outside the request: `None` or `NoneOnDryRun` (then it is also called for dry runs).', { enum: ['None', 'NoneOnDryRun', 'Some', 'Unknown'] }),
  timeoutSeconds: int32('Seconds a call may take, 1 to 30 (default 10); a call that takes longer fails under the failure policy.'),
  admissionReviewVersions: strings('AdmissionReview versions the webhook accepts, preferred first; must include `v1`.'),
  matchConditions: listOf('admissionregistration.MatchCondition', 'CEL conditions on the request; not supported by this server (refused).', { type: 'map', keys: ['name'], merge: 'name' }),
});

export const ADMISSIONREGISTRATION_SCHEMAS: Record<string, JsonSchema> = definitions('admissionregistration', {
  MutatingWebhookConfiguration: kind('admissionregistration.k8s.io/v1:MutatingWebhookConfiguration', 'Webhooks that may change objects on their way to storage.', {
    webhooks: listOf('admissionregistration.MutatingWebhook', 'The webhooks, called in order.', { type: 'map', keys: ['name'], merge: 'name' }),
  }),
  ValidatingWebhookConfiguration: kind('admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration', 'Webhooks that may refuse a write without changing the object.', {
    webhooks: listOf('admissionregistration.ValidatingWebhook', 'The webhooks, called in parallel.', { type: 'map', keys: ['name'], merge: 'name' }),
  }),
  MutatingWebhook: obj('A mutating admission webhook and the requests it is called for.', {
    ...webhookFields('mutating'),
    reinvocationPolicy: str('`Never` (default) or `IfNeeded`: call the webhook once more when a later webhook changed the object.', { enum: ['IfNeeded', 'Never'] }),
  }, { required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'] }),
  ValidatingWebhook: obj('A validating admission webhook and the requests it is called for.', webhookFields('validating'), { required: ['name', 'clientConfig', 'sideEffects', 'admissionReviewVersions'] }),
  WebhookClientConfig: obj('Where a webhook listens: exactly one of url and service.', {
    url: str('`https://host[:port]/path` of the webhook (no user, query or fragment).'),
    service: ref('admissionregistration.ServiceReference', 'A Service in the cluster the webhook is reached through.'),
    caBundle: str('PEM certificates (base64 in JSON) that verify the webhook’s serving certificate.', { format: 'byte' }),
  }),
  ServiceReference: obj('A Service of the cluster.', {
    namespace: str('Namespace of the Service.'),
    name: str('Name of the Service.'),
    path: str('URL path requests are sent to.'),
    port: int32('Port of the Service (default 443).'),
  }, { required: ['namespace', 'name'] }),
  RuleWithOperations: obj('Operations on resources.', {
    operations: list({ type: 'string', default: '' }, '`CREATE`, `UPDATE`, `DELETE`, `CONNECT` or `*`.', { type: 'atomic' }),
    apiGroups: strings('API groups (`""` the core group, `*` all).'),
    apiVersions: strings('API versions (`*` all).'),
    resources: strings('Resources (`pods`), subresources (`pods/status`, `*/status`), `*` (all resources) or `*/*` (all and their subresources).'),
    scope: str('`Cluster`, `Namespaced` or `*` (default).', { enum: ['*', 'Cluster', 'Namespaced'] }),
  }),
  MatchCondition: obj('A CEL condition on the request.', {
    name: str('Name of the condition.'),
    expression: str('CEL expression.'),
  }, { required: ['name', 'expression'] }),
});
