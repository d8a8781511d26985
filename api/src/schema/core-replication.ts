/** Schemas of v1 ReplicationController and PodTemplate. */
import { definitions, int32, int64, kind, listOf, obj, ref, str, strMap, type JsonSchema } from './dsl.js';

export const CORE_REPLICATION_SCHEMAS: Record<string, JsonSchema> = definitions('core', {
  ReplicationController: kind('v1:ReplicationController', 'Keeps a number of identical pods running (the older form of a ReplicaSet, with a label-map selector).', {
    spec: ref('core.ReplicationControllerSpec', 'The desired state.'),
    status: ref('core.ReplicationControllerStatus', 'The observed state. Read-only.'),
  }),
  ReplicationControllerSpec: obj('The desired state of a ReplicationController.', {
    replicas: int32('Number of pods (default 1).'),
    minReadySeconds: int32('Seconds a new pod must be ready before it counts as available (default 0).'),
    selector: { ...strMap('Labels of the pods it owns; defaults to the template’s labels.'), 'x-kubernetes-map-type': 'atomic' },
    template: ref('core.PodTemplateSpec', 'The pods to create; restartPolicy must be Always.'),
  }),
  ReplicationControllerStatus: obj('The observed state of a ReplicationController.', {
    replicas: int32('Pods it has.'),
    fullyLabeledReplicas: int32('Pods whose labels match the template’s.'),
    readyReplicas: int32('Ready pods.'),
    availableReplicas: int32('Pods ready for at least minReadySeconds.'),
    observedGeneration: int64('The generation the controller last acted on.'),
    conditions: listOf('core.ReplicationControllerCondition', 'Observations of its state.', { type: 'map', keys: ['type'], merge: 'type' }),
  }, { required: ['replicas'] }),
  ReplicationControllerCondition: obj('A condition of a ReplicationController.', {
    type: str('Type of condition.'),
    status: str('`True`, `False` or `Unknown`.'),
    lastTransitionTime: ref('meta.Time', 'When the status last changed.'),
    reason: str('Brief reason, in CamelCase.'),
    message: str('Details.'),
  }, { required: ['type', 'status'] }),
  PodTemplate: kind('v1:PodTemplate', 'A stored pod template.', {
    template: ref('core.PodTemplateSpec', 'The template.'),
  }),
});
