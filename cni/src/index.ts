// @nodelet/cni: CNI engine: conflists, plugin execution, version conversion, result cache, service and nodelet-cni.
export {};
