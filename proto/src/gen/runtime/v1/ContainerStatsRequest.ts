// Original file: cri/v1/api.proto


export interface ContainerStatsRequest {
  'containerId'?: (string);
}

export interface ContainerStatsRequest__Output {
  'containerId': (string);
}
