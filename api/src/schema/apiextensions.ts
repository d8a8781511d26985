/** Schemas of apiextensions.k8s.io/v1 CustomResourceDefinition (the served subset: docs/apiserver.md "Custom resources"). */
import { bool, definitions, int32, kind, listOf, obj, openObject, ref, str, strings, time, type JsonSchema } from './dsl.js';

export const APIEXTENSIONS_SCHEMAS: Record<string, JsonSchema> = definitions('apiextensions', {
  CustomResourceDefinition: kind('apiextensions.k8s.io/v1:CustomResourceDefinition', 'A new kind the API server serves, under /apis/<group>/<version>/<plural>, once Established.', {
    spec: ref('apiextensions.CustomResourceDefinitionSpec', 'The kind: group, names, scope and versions.'),
    status: ref('apiextensions.CustomResourceDefinitionStatus', 'Set by the server: conditions, accepted names, stored versions. Read-only.'),
  }, { required: ['spec'] }),
  CustomResourceDefinitionSpec: obj('How the new kind appears and is checked.', {
    group: str('The API group; the CRD must be named <names.plural>.<group>. Cannot be changed.'),
    names: ref('apiextensions.CustomResourceDefinitionNames', 'The resource and kind names.'),
    scope: str('`Namespaced` or `Cluster`.'),
    versions: listOf('apiextensions.CustomResourceDefinitionVersion', 'The versions served; exactly one is the storage version.', { type: 'atomic' }),
    conversion: ref('apiextensions.CustomResourceConversion', 'How objects move between versions; only `None` is served here.'),
    preserveUnknownFields: bool('Must be false (fields a schema does not declare are pruned).'),
  }, { required: ['group', 'names', 'scope', 'versions'] }),
  CustomResourceDefinitionNames: obj('The names of a custom resource.', {
    plural: str('The resource name in URLs; lowercase.'),
    singular: str('The singular name (default: the kind in lowercase).'),
    shortNames: strings('Short names kubectl accepts (`kubectl get <short>`).'),
    kind: str('The kind of the objects.'),
    listKind: str('The kind of lists (default: <kind>List).'),
    categories: strings('Groups of resources this one belongs to (`kubectl get all` lists category `all`).'),
  }, { required: ['plural', 'kind'] }),
  CustomResourceDefinitionVersion: obj('One version of a custom resource.', {
    name: str('The version name (v1, v1beta1, …).'),
    served: bool('Whether the version is served.'),
    storage: bool('Whether objects are stored in this version; exactly one version is.'),
    deprecated: bool('Whether the version is deprecated.'),
    deprecationWarning: str('The warning returned to clients of a deprecated version.'),
    schema: ref('apiextensions.CustomResourceValidation', 'The version’s schema.'),
    subresources: ref('apiextensions.CustomResourceSubresources', 'The status and scale subresources.'),
    additionalPrinterColumns: listOf('apiextensions.CustomResourceColumnDefinition', 'Columns of `kubectl get`, besides the name.', { type: 'atomic' }),
    selectableFields: listOf('apiextensions.SelectableField', 'Fields a field selector may name, besides metadata.name and metadata.namespace.', { type: 'atomic' }),
  }, { required: ['name', 'served', 'storage'] }),
  CustomResourceValidation: obj('A version’s schema.', {
    openAPIV3Schema: ref('apiextensions.JSONSchemaProps', 'The structural OpenAPI v3 schema objects are validated, pruned and defaulted with.'),
  }),
  JSONSchemaProps: openObject('A structural OpenAPI v3 schema (type, properties, items, required, enum, pattern, bounds, default, x-kubernetes-* extensions); x-kubernetes-validations is refused here.'),
  CustomResourceSubresources: obj('Subresources of a custom resource.', {
    status: ref('apiextensions.CustomResourceSubresourceStatus', 'When set (to {}), /status writes only .status and the main resource ignores it.'),
    scale: ref('apiextensions.CustomResourceSubresourceScale', 'When set, /scale reads and writes the replica count.'),
  }),
  CustomResourceSubresourceStatus: { type: 'object', description: 'Empty: its presence turns the status subresource on.' },
  CustomResourceSubresourceScale: obj('Where a custom resource keeps its replica counts.', {
    specReplicasPath: str('JSON path of the desired replicas, under .spec.'),
    statusReplicasPath: str('JSON path of the observed replicas, under .status.'),
    labelSelectorPath: str('JSON path of the label selector string (Scale status.selector).'),
  }, { required: ['specReplicasPath', 'statusReplicasPath'] }),
  CustomResourceColumnDefinition: obj('A column of `kubectl get`.', {
    name: str('The column header.'),
    type: str('integer, number, string, boolean or date.'),
    format: str('An OpenAPI format hint.'),
    description: str('What the column shows.'),
    priority: int32('0: shown by default; more: with `-o wide`.'),
    jsonPath: str('The JSON path of the value in each object.'),
  }, { required: ['name', 'type', 'jsonPath'] }),
  SelectableField: obj('A field a field selector may name.', { jsonPath: str('The JSON path of the field.') }, { required: ['jsonPath'] }),
  CustomResourceConversion: obj('How objects move between versions.', {
    strategy: str('`None`: only apiVersion changes. `Webhook` is refused by this server.'),
    webhook: ref('apiextensions.WebhookConversion', 'Webhook conversion (refused by this server).'),
  }, { required: ['strategy'] }),
  WebhookConversion: openObject('A conversion webhook; nodelet does not call webhooks, so a CRD naming one is refused.'),
  CustomResourceDefinitionStatus: obj('The state of a CRD.', {
    conditions: listOf('apiextensions.CustomResourceDefinitionCondition', 'NamesAccepted, Established, Terminating.', { type: 'map', keys: ['type'] }),
    acceptedNames: ref('apiextensions.CustomResourceDefinitionNames', 'The names being served.'),
    storedVersions: strings('Every version objects have been stored in.'),
  }),
  CustomResourceDefinitionCondition: obj('One condition of a CRD.', {
    type: str('NamesAccepted, Established or Terminating.'),
    status: str('True, False or Unknown.'),
    lastTransitionTime: time('When the status last changed.'),
    reason: str('Why, in one CamelCase word.'),
    message: str('Why, for humans.'),
  }, { required: ['type', 'status'] }),
});
