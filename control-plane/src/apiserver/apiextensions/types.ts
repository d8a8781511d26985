/** The apiextensions.k8s.io/v1 CustomResourceDefinition fields nodelet reads. */
import type { CustomResourceDefinitionNames } from '@nodelet/api';
import type { StructuralSchema } from './schema.js';

/** The CRD's names (the client's type: one definition). */
export type CrdNames = CustomResourceDefinitionNames;

export interface CrdPrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface CrdScale {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: StructuralSchema };
  subresources?: { status?: Record<string, never>; scale?: CrdScale };
  additionalPrinterColumns?: CrdPrinterColumn[];
  selectableFields?: Array<{ jsonPath: string }>;
}

export interface CrdSpec {
  group: string;
  names: CrdNames;
  scope: 'Namespaced' | 'Cluster';
  versions: CrdVersion[];
  conversion?: { strategy: string };
  preserveUnknownFields?: boolean;
}

export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** The finalizer a CRD carries until its objects are gone (upstream's name). */
export const CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';
