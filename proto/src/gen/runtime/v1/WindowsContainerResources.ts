// Original file: cri/v1/api.proto

import type { Long } from '@grpc/proto-loader';

export interface WindowsContainerResources {
  'cpuShares'?: (number | string | Long);
  'cpuCount'?: (number | string | Long);
  'cpuMaximum'?: (number | string | Long);
  'memoryLimitInBytes'?: (number | string | Long);
  'rootfsSizeInBytes'?: (number | string | Long);
}

export interface WindowsContainerResources__Output {
  'cpuShares': (string);
  'cpuCount': (string);
  'cpuMaximum': (string);
  'memoryLimitInBytes': (string);
  'rootfsSizeInBytes': (string);
}
