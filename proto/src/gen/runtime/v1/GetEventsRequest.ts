// Original file: cri/v1/api.proto


export interface GetEventsRequest {
}

export interface GetEventsRequest__Output {
}
