// Original file: cri/v1/api.proto


export interface UpdateRuntimeConfigResponse {
}

export interface UpdateRuntimeConfigResponse__Output {
}
