// Original file: cri/v1/api.proto


export interface RemovePodSandboxResponse {
}

export interface RemovePodSandboxResponse__Output {
}
