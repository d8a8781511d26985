// @nodelet/agent: the node agent: pod workers, PLEG, status manager, runtime (CRI + CNI), node status, node API.
export {};
