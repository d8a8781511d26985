// Original file: cri/v1/api.proto


export interface ListMetricDescriptorsRequest {
}

export interface ListMetricDescriptorsRequest__Output {
}
