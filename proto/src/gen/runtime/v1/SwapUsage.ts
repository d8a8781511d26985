// Original file: cri/v1/api.proto

import type { UInt64Value as _runtime_v1_UInt64Value, UInt64Value__Output as _runtime_v1_UInt64Value__Output } from '../../runtime/v1/UInt64Value.js';
import type { Long } from '@grpc/proto-loader';

export interface SwapUsage {
  'timestamp'?: (number | string | Long);
  'swapAvailableBytes'?: (_runtime_v1_UInt64Value | null);
  'swapUsageBytes'?: (_runtime_v1_UInt64Value | null);
}

export interface SwapUsage__Output {
  'timestamp': (string);
  'swapAvailableBytes': (_runtime_v1_UInt64Value__Output | null);
  'swapUsageBytes': (_runtime_v1_UInt64Value__Output | null);
}
