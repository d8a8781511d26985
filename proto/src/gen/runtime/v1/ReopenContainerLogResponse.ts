// Original file: cri/v1/api.proto


export interface ReopenContainerLogResponse {
}

export interface ReopenContainerLogResponse__Output {
}
