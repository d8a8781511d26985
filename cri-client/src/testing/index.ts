// @nodelet/cri-client/testing: fakes at the CRI process boundary, for unit tests of cri-client,
// the agent and the CLI. Source-only (not built).
export { FakeCriServer, type FakeCriServerOptions } from './fake-server.js';
export {
  FakeRuntimeService,
  imageIdFor,
  normalizeRef,
  rpcError,
  type FakeContainer,
  type FakeImage,
  type FakeSandbox,
  type GrpcStatusName,
  type HeldCall,
  type RecordedCall,
} from './fake-runtime-service.js';
export { FakeStreamingServer, type FakePortForwardHandler, type FakeStreamHandler, type FakeStreamSession } from './fake-streaming.js';
export { FakeHealthServer, type ServingStatusName } from './health-server.js';
