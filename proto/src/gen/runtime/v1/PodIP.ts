// Original file: cri/v1/api.proto


export interface PodIP {
  'ip'?: (string);
}

export interface PodIP__Output {
  'ip': (string);
}
