// Original file: cri/v1/api.proto


export interface RemoveContainerResponse {
}

export interface RemoveContainerResponse__Output {
}
