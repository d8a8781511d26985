// Original file: cri/v1/api.proto


export interface NetworkConfig {
  'podCidr'?: (string);
}

export interface NetworkConfig__Output {
  'podCidr': (string);
}
