// @nodelet/control-plane: API server, storage (SQLite, etcd), scheduler, controllers.
export {};
