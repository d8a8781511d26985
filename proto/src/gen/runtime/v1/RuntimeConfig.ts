// Original file: cri/v1/api.proto

import type { NetworkConfig as _runtime_v1_NetworkConfig, NetworkConfig__Output as _runtime_v1_NetworkConfig__Output } from '../../runtime/v1/NetworkConfig.js';

export interface RuntimeConfig {
  'networkConfig'?: (_runtime_v1_NetworkConfig | null);
}

export interface RuntimeConfig__Output {
  'networkConfig': (_runtime_v1_NetworkConfig__Output | null);
}
