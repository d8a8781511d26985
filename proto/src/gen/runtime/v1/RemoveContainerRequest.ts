// Original file: cri/v1/api.proto


export interface RemoveContainerRequest {
  'containerId'?: (string);
}

export interface RemoveContainerRequest__Output {
  'containerId': (string);
}
