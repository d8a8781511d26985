/** The autoscaling/v1 Scale view of a Deployment or ReplicaSet, for InMemoryApiServer's `/scale`. */
import type { KubeObject } from '../types/meta.js';
import type { Scale } from '../types/apps.js';
import { formatLabelSelector, labelSelectorFromObject } from '../selectors.js';
import type { LabelSelector } from '../types/meta.js';

type Scalable = KubeObject & { spec?: { replicas?: number; selector?: LabelSelector }; status?: { replicas?: number } };

export function toScale(obj: KubeObject): Scale {
  const o = obj as Scalable;
  const { name, namespace, uid, resourceVersion, creationTimestamp } = o.metadata;
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: o.spec?.replicas ?? 1 },
    status: { replicas: o.status?.replicas ?? 0, selector: formatLabelSelector(labelSelectorFromObject(o.spec?.selector)) },
  };
}

/** The object with `spec.replicas` from `scale`; a set Scale resourceVersion is a precondition. */
export function withScale(obj: KubeObject, scale: Scale): KubeObject {
  const o = structuredClone(obj) as Scalable;
  o.spec = { ...o.spec, replicas: scale.spec?.replicas ?? 0 };
  if (scale.metadata?.resourceVersion) o.metadata.resourceVersion = scale.metadata.resourceVersion;
  return o;
}
