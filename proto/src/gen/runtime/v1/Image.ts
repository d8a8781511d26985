// Original file: cri/v1/api.proto

import type { Int64Value as _runtime_v1_Int64Value, Int64Value__Output as _runtime_v1_Int64Value__Output } from '../../runtime/v1/Int64Value.js';
import type { ImageSpec as _runtime_v1_ImageSpec, ImageSpec__Output as _runtime_v1_ImageSpec__Output } from '../../runtime/v1/ImageSpec.js';
import type { Long } from '@grpc/proto-loader';

export interface Image {
  'id'?: (string);
  'repoTags'?: (string)[];
  'repoDigests'?: (string)[];
  'size'?: (number | string | Long);
  'uid'?: (_runtime_v1_Int64Value | null);
  'username'?: (string);
  'spec'?: (_runtime_v1_ImageSpec | null);
  'pinned'?: (boolean);
}

export interface Image__Output {
  'id': (string);
  'repoTags': (string)[];
  'repoDigests': (string)[];
  'size': (string);
  'uid': (_runtime_v1_Int64Value__Output | null);
  'username': (string);
  'spec': (_runtime_v1_ImageSpec__Output | null);
  'pinned': (boolean);
}
