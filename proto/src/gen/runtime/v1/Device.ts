// Original file: cri/v1/api.proto


export interface Device {
  'containerPath'?: (string);
  'hostPath'?: (string);
  'permissions'?: (string);
}

export interface Device__Output {
  'containerPath': (string);
  'hostPath': (string);
  'permissions': (string);
}
