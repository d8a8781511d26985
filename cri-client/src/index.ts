// @nodelet/cri-client: typed CRI v1 RuntimeService/ImageService client over a unix socket, plus streaming client.
export {};
