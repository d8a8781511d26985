// Original file: cri/v1/api.proto


export interface PodSandboxStatsRequest {
  'podSandboxId'?: (string);
}

export interface PodSandboxStatsRequest__Output {
  'podSandboxId': (string);
}
