// @nodelet/api: Kubernetes object types, validation, defaulting, protobuf codec, REST client and informers.
export {};
