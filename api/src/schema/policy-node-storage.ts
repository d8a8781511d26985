/** Schemas of policy/v1 (PodDisruptionBudget, Eviction), node.k8s.io/v1 RuntimeClass and storage.k8s.io/v1 StorageClass. */
import { bool, definitions, int32, int64, kind, listOf, mapOf, obj, quantities, ref, str, strMap, strings, type JsonSchema } from './dsl.js';

export const POLICY_NODE_STORAGE_SCHEMAS: Record<string, JsonSchema> = {
  ...definitions('policy', {
    PodDisruptionBudget: kind('policy/v1:PodDisruptionBudget', 'Limits how many pods of a set voluntary disruptions (evictions, drains) may take down at once.', {
      spec: ref('policy.PodDisruptionBudgetSpec', 'The budget.'),
      status: ref('policy.PodDisruptionBudgetStatus', 'The budget’s current state, kept by the disruption controller. Read-only.'),
    }),
    PodDisruptionBudgetSpec: obj('A disruption budget; minAvailable and maxUnavailable are exclusive.', {
      minAvailable: ref('intstr.IntOrString', 'Pods that must stay available after an eviction, as a number or a percentage.'),
      selector: { ...ref('meta.LabelSelector', 'Pods the budget covers; null selects none, `{}` every pod of the namespace.'), 'x-kubernetes-patch-strategy': 'replace' },
      maxUnavailable: ref('intstr.IntOrString', 'Pods that may be unavailable after an eviction, as a number or a percentage of the expected pods.'),
      unhealthyPodEvictionPolicy: str('When unready pods may be evicted: `IfHealthyBudget` (default: only while the budget is met) or `AlwaysAllow`.', { enum: ['AlwaysAllow', 'IfHealthyBudget'] }),
    }),
    PodDisruptionBudgetStatus: obj('The state of a disruption budget.', {
      observedGeneration: int64('Generation of the budget the status was computed for; the rest is valid only when it is current.'),
      disruptedPods: mapOf(ref('meta.Time', 'When the eviction was admitted.'), 'Pods an eviction let go that the controller has not yet seen being deleted (pod name → time).'),
      disruptionsAllowed: int32('Evictions allowed now.'),
      currentHealthy: int32('Healthy (ready) pods.'),
      desiredHealthy: int32('Healthy pods the budget needs.'),
      expectedPods: int32('Pods the budget counts (from the selector, or the pods’ controllers’ scale).'),
      conditions: listOf('meta.Condition', 'DisruptionAllowed, with reason SufficientPods, InsufficientPods or SyncFailed.', { type: 'map', keys: ['type'], merge: 'type' }),
    }, { required: ['disruptionsAllowed', 'currentHealthy', 'desiredHealthy', 'expectedPods'] }),
    Eviction: kind('policy/v1:Eviction', 'A request to delete a pod if its disruption budget allows it; POSTed to the pod’s eviction subresource.', {
      deleteOptions: ref('meta.DeleteOptions', 'Options of the delete that follows.'),
    }),
  }),
  ...definitions('node', {
    RuntimeClass: kind('node.k8s.io/v1:RuntimeClass', 'A container runtime configuration pods can ask for by name (spec.runtimeClassName).', {
      handler: str('The CRI runtime handler that runs the pods (RunPodSandbox’s runtime_handler); a DNS label. Cannot be changed.'),
      overhead: ref('node.Overhead', 'Resources a pod’s sandbox takes with this runtime; added to the pod at admission.'),
      scheduling: ref('node.Scheduling', 'Nodes that support this runtime; merged into the pods at admission.'),
    }, { required: ['handler'] }),
    Overhead: obj('Sandbox overhead of a runtime.', { podFixed: quantities('Fixed resources per pod.') }),
    Scheduling: obj('Where pods of a runtime class may run.', {
      nodeSelector: { ...strMap('Labels nodes supporting the runtime carry; merged into the pod’s nodeSelector.'), 'x-kubernetes-map-type': 'atomic' },
      tolerations: listOf('core.Toleration', 'Tolerations added to the pods.', { type: 'atomic' }),
    }),
  }),
  ...definitions('storage', {
    StorageClass: kind('storage.k8s.io/v1:StorageClass', 'A class of storage that claims ask for and provisioners make volumes of.', {
      provisioner: str('Name of the provisioner.'),
      parameters: strMap('Provisioner-specific parameters.'),
      reclaimPolicy: str('Reclaim policy of provisioned volumes: `Delete` (default) or `Retain`.', { enum: ['Delete', 'Recycle', 'Retain'] }),
      mountOptions: strings('Mount options of provisioned volumes.'),
      allowVolumeExpansion: bool('Claims of this class may grow.'),
      volumeBindingMode: str('`Immediate` (default) or `WaitForFirstConsumer` (bind once a pod using the claim is scheduled).', { enum: ['Immediate', 'WaitForFirstConsumer'] }),
      allowedTopologies: listOf('core.TopologySelectorTerm', 'Where volumes may be provisioned.', { type: 'atomic' }),
    }, { required: ['provisioner'] }),
  }),
  ...definitions('core', {
    TopologySelectorTerm: obj('A topology term; requirements ANDed.', {
      matchLabelExpressions: listOf('core.TopologySelectorLabelRequirement', 'The requirements.', { type: 'atomic' }),
    }, { mapType: 'atomic' }),
    TopologySelectorLabelRequirement: obj('A topology label and its allowed values.', {
      key: str('Label key.'),
      values: strings('Allowed values.'),
    }, { required: ['key', 'values'] }),
  }),
};
