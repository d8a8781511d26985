// Original file: cri/v1/api.proto


export interface PullImageResponse {
  'imageRef'?: (string);
}

export interface PullImageResponse__Output {
  'imageRef': (string);
}
