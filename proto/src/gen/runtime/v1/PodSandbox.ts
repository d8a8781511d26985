// Original file: cri/v1/api.proto

import type { PodSandboxMetadata as _runtime_v1_PodSandboxMetadata, PodSandboxMetadata__Output as _runtime_v1_PodSandboxMetadata__Output } from '../../runtime/v1/PodSandboxMetadata.js';
import type { PodSandboxState as _runtime_v1_PodSandboxState, PodSandboxState__Output as _runtime_v1_PodSandboxState__Output } from '../../runtime/v1/PodSandboxState.js';
import type { Long } from '@grpc/proto-loader';

export interface PodSandbox {
  'id'?: (string);
  'metadata'?: (_runtime_v1_PodSandboxMetadata | null);
  'state'?: (_runtime_v1_PodSandboxState);
  'createdAt'?: (number | string | Long);
  'labels'?: ({[key: string]: string});
  'annotations'?: ({[key: string]: string});
  'runtimeHandler'?: (string);
}

export interface PodSandbox__Output {
  'id': (string);
  'metadata': (_runtime_v1_PodSandboxMetadata__Output | null);
  'state': (_runtime_v1_PodSandboxState__Output);
  'createdAt': (string);
  'labels': ({[key: string]: string});
  'annotations': ({[key: string]: string});
  'runtimeHandler': (string);
}
