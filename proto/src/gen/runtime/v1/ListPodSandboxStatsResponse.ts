// Original file: cri/v1/api.proto

import type { PodSandboxStats as _runtime_v1_PodSandboxStats, PodSandboxStats__Output as _runtime_v1_PodSandboxStats__Output } from '../../runtime/v1/PodSandboxStats.js';

export interface ListPodSandboxStatsResponse {
  'stats'?: (_runtime_v1_PodSandboxStats)[];
}

export interface ListPodSandboxStatsResponse__Output {
  'stats': (_runtime_v1_PodSandboxStats__Output)[];
}
