// Original file: cri/v1/api.proto


export interface PodSandboxStatusRequest {
  'podSandboxId'?: (string);
  'verbose'?: (boolean);
}

export interface PodSandboxStatusRequest__Output {
  'podSandboxId': (string);
  'verbose': (boolean);
}
