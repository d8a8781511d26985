/** Schemas of rbac.authorization.k8s.io/v1, the authorization and authentication review kinds, and certificates.k8s.io/v1. */
import { bool, definitions, int64, kind, listOf, mapOf, obj, ref, str, strings, type JsonSchema } from './dsl.js';

const rulesOf = (of: string): JsonSchema => listOf('rbac.PolicyRule', `Permissions the ${of} grants.`, { type: 'atomic' });
const extra = mapOf({ type: 'array', items: { type: 'string', default: '' } }, 'Extra attributes of the user, as lists of strings.');

export const RBAC_AUTH_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('rbac', {
    Role: kind('rbac.authorization.k8s.io/v1:Role', 'Permissions within one namespace.', { rules: rulesOf('role') }),
    ClusterRole: kind('rbac.authorization.k8s.io/v1:ClusterRole', 'Permissions cluster-wide or, through a RoleBinding, in one namespace.', {
      rules: rulesOf('role'),
      aggregationRule: ref('rbac.AggregationRule', 'Fill the rules from the ClusterRoles these selectors match (the controller keeps them).'),
    }),
    AggregationRule: obj('Which ClusterRoles to aggregate.', { clusterRoleSelectors: listOf('meta.LabelSelector', 'Selectors of the ClusterRoles.', { type: 'atomic' }) }),
    PolicyRule: obj('Verbs allowed on resources or non-resource URLs.', {
      verbs: strings('Verbs, or `*`.'),
      apiGroups: strings('API groups of the resources (`""` core), or `*`.'),
      resources: strings('Resources (`pods`, `pods/log`), or `*`.'),
      resourceNames: strings('Only these object names; all when empty.'),
      nonResourceURLs: strings('URL paths (`/healthz`, `/api/*`) for ClusterRoles.'),
    }, { required: ['verbs'] }),
    RoleBinding: kind('rbac.authorization.k8s.io/v1:RoleBinding', 'Grants a Role or ClusterRole to subjects within a namespace.', {
      subjects: listOf('rbac.Subject', 'Who gets the role.', { type: 'atomic' }),
      roleRef: ref('rbac.RoleRef', 'The role. Cannot be changed.'),
    }, { required: ['roleRef'] }),
    ClusterRoleBinding: kind('rbac.authorization.k8s.io/v1:ClusterRoleBinding', 'Grants a ClusterRole to subjects across the cluster.', {
      subjects: listOf('rbac.Subject', 'Who gets the role.', { type: 'atomic' }),
      roleRef: ref('rbac.RoleRef', 'The ClusterRole. Cannot be changed.'),
    }, { required: ['roleRef'] }),
    Subject: obj('A user, group or service account.', {
      kind: str('`User`, `Group` or `ServiceAccount`.'),
      apiGroup: str('`rbac.authorization.k8s.io` for users and groups, `""` for service accounts.'),
      name: str('Name of the subject.'),
      namespace: str('Namespace of a service account.'),
    }, { required: ['kind', 'name'], mapType: 'atomic' }),
    RoleRef: obj('The role a binding grants.', {
      apiGroup: str('`rbac.authorization.k8s.io`.'),
      kind: str('`Role` or `ClusterRole`.'),
      name: str('Name of the role.'),
    }, { required: ['apiGroup', 'kind', 'name'], mapType: 'atomic' }),
  }),
  ...definitions('authorization', {
    SelfSubjectAccessReview: kind('authorization.k8s.io/v1:SelfSubjectAccessReview', 'Asks whether the caller may perform an action (kubectl auth can-i).', {
      spec: ref('authorization.SelfSubjectAccessReviewSpec', 'The action.'),
      status: ref('authorization.SubjectAccessReviewStatus', 'The answer.'),
    }, { required: ['spec'] }),
    SelfSubjectAccessReviewSpec: obj('An action; exactly one of the attributes.', {
      resourceAttributes: ref('authorization.ResourceAttributes', 'An action on a resource.'),
      nonResourceAttributes: ref('authorization.NonResourceAttributes', 'An action on a URL path.'),
    }),
    SubjectAccessReview: kind('authorization.k8s.io/v1:SubjectAccessReview', 'Asks whether a user may perform an action.', {
      spec: ref('authorization.SubjectAccessReviewSpec', 'The user and the action.'),
      status: ref('authorization.SubjectAccessReviewStatus', 'The answer.'),
    }, { required: ['spec'] }),
    LocalSubjectAccessReview: kind('authorization.k8s.io/v1:LocalSubjectAccessReview', 'A SubjectAccessReview within one namespace.', {
      spec: ref('authorization.SubjectAccessReviewSpec', 'The user and the action; the namespace must be the review’s.'),
      status: ref('authorization.SubjectAccessReviewStatus', 'The answer.'),
    }, { required: ['spec'] }),
    SubjectAccessReviewSpec: obj('A user and an action.', {
      resourceAttributes: ref('authorization.ResourceAttributes', 'An action on a resource.'),
      nonResourceAttributes: ref('authorization.NonResourceAttributes', 'An action on a URL path.'),
      user: str('User name.'),
      groups: strings('Groups of the user.'),
      extra,
      uid: str('UID of the user.'),
    }),
    ResourceAttributes: obj('An action on a resource.', {
      namespace: str('Namespace; empty for all or for cluster-scoped resources.'),
      verb: str('Verb: get, list, watch, create, update, patch, delete, …'),
      group: str('API group.'),
      version: str('API version.'),
      resource: str('Resource.'),
      subresource: str('Subresource.'),
      name: str('Object name; empty for all.'),
      fieldSelector: ref('authorization.FieldSelectorAttributes', 'Field selector of a list or watch.'),
      labelSelector: ref('authorization.LabelSelectorAttributes', 'Label selector of a list or watch.'),
    }),
    FieldSelectorAttributes: obj('A field selector of a request.', {
      rawSelector: str('The selector as written.'),
      requirements: listOf('meta.FieldSelectorRequirement', 'The parsed requirements.', { type: 'atomic' }),
    }),
    LabelSelectorAttributes: obj('A label selector of a request.', {
      rawSelector: str('The selector as written.'),
      requirements: listOf('meta.LabelSelectorRequirement', 'The parsed requirements.', { type: 'atomic' }),
    }),
    NonResourceAttributes: obj('An action on a URL path.', { path: str('URL path.'), verb: str('HTTP verb, lower case.') }),
    SubjectAccessReviewStatus: obj('The answer to an access review.', {
      allowed: bool('The action is allowed.'),
      denied: bool('The action is explicitly denied.'),
      reason: str('Why.'),
      evaluationError: str('Problem while checking, if any.'),
    }, { required: ['allowed'] }),
    SelfSubjectRulesReview: kind('authorization.k8s.io/v1:SelfSubjectRulesReview', 'Lists what the caller may do in a namespace (kubectl auth can-i --list).', {
      spec: ref('authorization.SelfSubjectRulesReviewSpec', 'The namespace.'),
      status: ref('authorization.SubjectRulesReviewStatus', 'The rules.'),
    }, { required: ['spec'] }),
    SelfSubjectRulesReviewSpec: obj('The namespace to list rules for.', { namespace: str('The namespace.') }),
    SubjectRulesReviewStatus: obj('What a user may do.', {
      resourceRules: listOf('authorization.ResourceRule', 'Rules on resources.', { type: 'atomic' }),
      nonResourceRules: listOf('authorization.NonResourceRule', 'Rules on URL paths.', { type: 'atomic' }),
      incomplete: bool('The list may miss rules (an authorizer could not list them).'),
      evaluationError: str('Problem while listing, if any.'),
    }, { required: ['resourceRules', 'nonResourceRules', 'incomplete'] }),
    ResourceRule: obj('Verbs allowed on resources.', {
      verbs: strings('Verbs.'),
      apiGroups: strings('API groups.'),
      resources: strings('Resources.'),
      resourceNames: strings('Object names; all when empty.'),
    }, { required: ['verbs'] }),
    NonResourceRule: obj('Verbs allowed on URL paths.', { verbs: strings('Verbs.'), nonResourceURLs: strings('URL paths.') }, { required: ['verbs'] }),
  }),
  ...definitions('meta', {
    FieldSelectorRequirement: obj('A requirement on a field.', {
      key: str('Field path.'),
      operator: str('`In`, `NotIn`, `Exists` or `DoesNotExist`.'),
      values: strings('Values.'),
    }, { required: ['key', 'operator'] }),
  }),
  ...definitions('authentication', {
    TokenReview: kind('authentication.k8s.io/v1:TokenReview', 'Asks the server who a bearer token belongs to.', {
      spec: ref('authentication.TokenReviewSpec', 'The token.'),
      status: ref('authentication.TokenReviewStatus', 'The answer.'),
    }, { required: ['spec'] }),
    TokenReviewSpec: obj('A token to check.', { token: str('The bearer token.'), audiences: strings('Audiences the token must be valid for.') }),
    TokenReviewStatus: obj('Who a token belongs to.', {
      authenticated: bool('The token is valid.'),
      user: ref('authentication.UserInfo', 'Its user.'),
      audiences: strings('Audiences the token is valid for.'),
      error: str('Why it is not valid.'),
    }),
    UserInfo: obj('A user.', { username: str('Name.'), uid: str('UID.'), groups: strings('Groups.'), extra }),
    SelfSubjectReview: kind('authentication.k8s.io/v1:SelfSubjectReview', 'Tells the caller who they are (kubectl auth whoami).', {
      status: ref('authentication.SelfSubjectReviewStatus', 'The answer.'),
    }),
    SelfSubjectReviewStatus: obj('The caller.', { userInfo: ref('authentication.UserInfo', 'The caller’s user.') }),
    TokenRequest: kind('authentication.k8s.io/v1:TokenRequest', 'Requests a token for a service account (serviceaccounts/token).', {
      spec: ref('authentication.TokenRequestSpec', 'What the token is for.'),
      status: ref('authentication.TokenRequestStatus', 'The token.'),
    }, { required: ['spec'] }),
    TokenRequestSpec: obj('What a token is for.', {
      audiences: strings('Audiences of the token.'),
      expirationSeconds: int64('Requested lifetime.'),
      boundObjectRef: ref('authentication.BoundObjectReference', 'Object (a pod or secret) the token is valid only as long as.'),
    }, { required: ['audiences'] }),
    TokenRequestStatus: obj('An issued token.', { token: str('The token.'), expirationTimestamp: ref('meta.Time', 'When it expires.') }, { required: ['token', 'expirationTimestamp'] }),
    BoundObjectReference: obj('The object a token is bound to.', { kind: str('`Pod` or `Secret`.'), apiVersion: str('API version.'), name: str('Name.'), uid: str('UID.') }),
  }),
  ...definitions('certificates', {
    CertificateSigningRequest: kind('certificates.k8s.io/v1:CertificateSigningRequest', 'A request for a certificate from a signer, approved and then signed.', {
      spec: ref('certificates.CertificateSigningRequestSpec', 'The request.'),
      status: ref('certificates.CertificateSigningRequestStatus', 'Approval and the certificate.'),
    }, { required: ['spec'] }),
    CertificateSigningRequestSpec: obj('A certificate request.', {
      request: { type: 'string', format: 'byte', description: 'PEM-encoded PKCS#10 request, base64 in JSON.' },
      signerName: str('Signer to ask, e.g. `kubernetes.io/kube-apiserver-client`.'),
      expirationSeconds: { type: 'integer', format: 'int32', description: 'Requested validity of the certificate.' },
      usages: strings('Key usages requested.'),
      username: str('Requesting user (set by the server).'),
      uid: str('UID of the requesting user (set by the server).'),
      groups: strings('Groups of the requesting user (set by the server).'),
      extra,
    }, { required: ['request', 'signerName'] }),
    CertificateSigningRequestStatus: obj('State of a certificate request.', {
      conditions: listOf('certificates.CertificateSigningRequestCondition', 'Approved, Denied or Failed.', { type: 'map', keys: ['type'] }),
      certificate: { type: 'string', format: 'byte', description: 'The issued PEM certificate, base64 in JSON.' },
    }),
    CertificateSigningRequestCondition: obj('A condition of a certificate request.', {
      type: str('`Approved`, `Denied` or `Failed`.'),
      status: str('`True`, `False` or `Unknown`.'),
      reason: str('Brief reason.'),
      message: str('Details.'),
      lastUpdateTime: ref('meta.Time', 'When it was last updated.'),
      lastTransitionTime: ref('meta.Time', 'When the status last changed.'),
    }, { required: ['type', 'status'] }),
  }),
};
