/** apiextensions.k8s.io/v1 CustomResourceDefinition: the fields clients of nodelet read. */
import type { KubeObject } from './meta.js';

export interface CustomResourceDefinitionNames {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface CustomResourceDefinition extends KubeObject {
  spec: {
    group: string;
    names: CustomResourceDefinitionNames;
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{ name: string; served: boolean; storage: boolean; [k: string]: unknown }>;
    [k: string]: unknown;
  };
  status?: {
    conditions?: Array<{ type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }>;
    acceptedNames?: CustomResourceDefinitionNames;
    storedVersions?: string[];
  };
}
