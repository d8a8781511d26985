/**
 * @nodelet/cri-client/fake-runtime: the one model of a fake CRI runtime's state (runtime-state.ts).
 * Built (the hollow nodes of `nodelet hollow` run on it in-process); the gRPC fake of
 * `@nodelet/cri-client/testing` serves the same model over a socket.
 */
export { fakeRuntimeError, grpcStatusOf, type GrpcStatusName } from './errors.js';
export { FakeImageStore, imageIdFor, imageView, normalizeRef, type FakeImage } from './image-store.js';
export {
  FakeRuntimeState,
  labelsMatch,
  newId,
  nowNs,
  type FakeContainer,
  type FakeListFilter,
  type FakePodNetwork,
  type FakeRuntimeStateOptions,
  type FakeSandbox,
} from './runtime-state.js';
