// Original file: cri/v1/api.proto


export interface UpdateContainerResourcesResponse {
}

export interface UpdateContainerResourcesResponse__Output {
}
