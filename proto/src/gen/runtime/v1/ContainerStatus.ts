// Original file: cri/v1/api.proto

import type { ContainerMetadata as _runtime_v1_ContainerMetadata, ContainerMetadata__Output as _runtime_v1_ContainerMetadata__Output } from '../../runtime/v1/ContainerMetadata.js';
import type { ContainerState as _runtime_v1_ContainerState, ContainerState__Output as _runtime_v1_ContainerState__Output } from '../../runtime/v1/ContainerState.js';
import type { ImageSpec as _runtime_v1_ImageSpec, ImageSpec__Output as _runtime_v1_ImageSpec__Output } from '../../runtime/v1/ImageSpec.js';
import type { Mount as _runtime_v1_Mount, Mount__Output as _runtime_v1_Mount__Output } from '../../runtime/v1/Mount.js';
import type { ContainerResources as _runtime_v1_ContainerResources, ContainerResources__Output as _runtime_v1_ContainerResources__Output } from '../../runtime/v1/ContainerResources.js';
import type { Long } from '@grpc/proto-loader';

export interface ContainerStatus {
  'id'?: (string);
  'metadata'?: (_runtime_v1_ContainerMetadata | null);
  'state'?: (_runtime_v1_ContainerState);
  'createdAt'?: (number | string | Long);
  'startedAt'?: (number | string | Long);
  'finishedAt'?: (number | string | Long);
  'exitCode'?: (number);
  'image'?: (_runtime_v1_ImageSpec | null);
  'imageRef'?: (string);
  'reason'?: (string);
  'message'?: (string);
  'labels'?: ({[key: string]: string});
  'annotations'?: ({[key: string]: string});
  'mounts'?: (_runtime_v1_Mount)[];
  'logPath'?: (string);
  'resources'?: (_runtime_v1_ContainerResources | null);
}

export interface ContainerStatus__Output {
  'id': (string);
  'metadata': (_runtime_v1_ContainerMetadata__Output | null);
  'state': (_runtime_v1_ContainerState__Output);
  'createdAt': (string);
  'startedAt': (string);
  'finishedAt': (string);
  'exitCode': (number);
  'image': (_runtime_v1_ImageSpec__Output | null);
  'imageRef': (string);
  'reason': (string);
  'message': (string);
  'labels': ({[key: string]: string});
  'annotations': ({[key: string]: string});
  'mounts': (_runtime_v1_Mount__Output)[];
  'logPath': (string);
  'resources': (_runtime_v1_ContainerResources__Output | null);
}
