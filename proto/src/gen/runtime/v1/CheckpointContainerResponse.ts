// Original file: cri/v1/api.proto


export interface CheckpointContainerResponse {
}

export interface CheckpointContainerResponse__Output {
}
