// @nodelet/cli: the nodelet command: cri, cni, image, runtime, doctor, install, join.
export {};
