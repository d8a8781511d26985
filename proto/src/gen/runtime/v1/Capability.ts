// Original file: cri/v1/api.proto


export interface Capability {
  'addCapabilities'?: (string)[];
  'dropCapabilities'?: (string)[];
  'addAmbientCapabilities'?: (string)[];
}

export interface Capability__Output {
  'addCapabilities': (string)[];
  'dropCapabilities': (string)[];
  'addAmbientCapabilities': (string)[];
}
