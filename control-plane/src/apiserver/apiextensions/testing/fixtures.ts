/**
 * A CRD in the style real projects ship (cert-manager, Argo): namespaced, two versions with
 * `conversion: None`, status and scale subresources, printer columns, a defaulted field and a
 * pattern-validated one. The server tests and the kubectl suite share it.
 */
export const WIDGET_GROUP = 'demo.nodelet.io';

/** The CRD, as kubectl would send it (`versions` first v1 = storage, then v1beta1). */
export function widgetCrd(): Record<string, unknown> {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['image'],
        properties: {
          image: { type: 'string', pattern: '^[a-z0-9./-]+(:[A-Za-z0-9._-]+)?$', description: 'The image the widget runs.' },
          replicas: { type: 'integer', minimum: 0, maximum: 10, default: 1, description: 'How many widgets.' },
          mode: { type: 'string', enum: ['fast', 'safe'], default: 'safe' },
          selector: { type: 'string' },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          port: { 'x-kubernetes-int-or-string': true },
        },
      },
      status: {
        type: 'object',
        properties: {
          replicas: { type: 'integer' },
          phase: { type: 'string' },
        },
      },
    },
  };
  const version = (name: string, storage: boolean): Record<string, unknown> => ({
    name,
    served: true,
    storage,
    schema: { openAPIV3Schema: schema },
    subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.spec.selector' } },
    selectableFields: [{ jsonPath: '.spec.mode' }],
    additionalPrinterColumns: [
      { name: 'Image', type: 'string', jsonPath: '.spec.image' },
      { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${WIDGET_GROUP}` },
    spec: {
      group: WIDGET_GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all'] },
      versions: [version('v1', true), version('v1beta1', false)],
    },
  };
}
