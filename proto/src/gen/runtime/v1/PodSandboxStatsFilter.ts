// Original file: cri/v1/api.proto


export interface PodSandboxStatsFilter {
  'id'?: (string);
  'labelSelector'?: ({[key: string]: string});
}

export interface PodSandboxStatsFilter__Output {
  'id': (string);
  'labelSelector': ({[key: string]: string});
}
