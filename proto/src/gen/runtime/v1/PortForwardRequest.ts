// Original file: cri/v1/api.proto


export interface PortForwardRequest {
  'podSandboxId'?: (string);
  'port'?: (number)[];
}

export interface PortForwardRequest__Output {
  'podSandboxId': (string);
  'port': (number)[];
}
