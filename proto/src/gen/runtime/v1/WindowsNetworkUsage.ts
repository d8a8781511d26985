// Original file: cri/v1/api.proto

import type { WindowsNetworkInterfaceUsage as _runtime_v1_WindowsNetworkInterfaceUsage, WindowsNetworkInterfaceUsage__Output as _runtime_v1_WindowsNetworkInterfaceUsage__Output } from '../../runtime/v1/WindowsNetworkInterfaceUsage.js';
import type { Long } from '@grpc/proto-loader';

export interface WindowsNetworkUsage {
  'timestamp'?: (number | string | Long);
  'defaultInterface'?: (_runtime_v1_WindowsNetworkInterfaceUsage | null);
  'interfaces'?: (_runtime_v1_WindowsNetworkInterfaceUsage)[];
}

export interface WindowsNetworkUsage__Output {
  'timestamp': (string);
  'defaultInterface': (_runtime_v1_WindowsNetworkInterfaceUsage__Output | null);
  'interfaces': (_runtime_v1_WindowsNetworkInterfaceUsage__Output)[];
}
