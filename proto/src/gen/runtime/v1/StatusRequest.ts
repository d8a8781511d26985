// Original file: cri/v1/api.proto


export interface StatusRequest {
  'verbose'?: (boolean);
}

export interface StatusRequest__Output {
  'verbose': (boolean);
}
