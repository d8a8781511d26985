// @nodelet/control-plane: API server, storage (SQLite, etcd), scheduler, controllers.
export {};
export { startControlPlane, KUBERNETES_SERVICE_NAMES, type ControlPlane, type ControlPlaneOptions } from './control-plane.js';
export { createApiServer, type ApiServer, type ApiServerOptions } from './apiserver/server.js';
export { loadAdmissionConfiguration, type PodSecurityConfig } from './apiserver/admission/pod-security/config.js';
export { DEFAULT_API_SERVER_LIMITS, type ApiServerLimits } from './apiserver/limits.js';
export { createTokenAuthenticator, type TokenAuthenticatorOptions } from './apiserver/auth/authenticator.js';
export { NODE_CREDENTIALS_PATH } from './apiserver/auth/node-credentials.js';
export type { Authenticator, UserInfo } from './apiserver/auth/types.js';
export { ensurePki, type Pki } from './pki/pki.js';
export { createCa, issueCertificate, loadCa, type KeyPairPem } from './pki/certs.js';
export { CONTROLLER_NAMES, NAMESPACE_SETUP_CONTROLLERS, startControllerManager, type ControllerName } from './controllers/index.js';
export { startScheduler, type SchedulerHandle, type StartSchedulerOptions } from './scheduler/index.js';
export { createSqliteStore } from './storage/index.js';
