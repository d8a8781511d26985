// @nodelet/lab-runtime: containerd configuration and lifecycle for lab machines and tests.
export {};
