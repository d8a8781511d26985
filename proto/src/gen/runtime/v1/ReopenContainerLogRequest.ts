// Original file: cri/v1/api.proto


export interface ReopenContainerLogRequest {
  'containerId'?: (string);
}

export interface ReopenContainerLogRequest__Output {
  'containerId': (string);
}
