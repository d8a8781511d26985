/**
 * @nodelet/proto: the pinned CRI v1 api.proto (package `runtime.v1`) and the TypeScript types
 * generated from it. No logic: cri-client loads {@link CRI_PROTO_PATH} with {@link CRI_LOADER_OPTIONS}
 * through @grpc/proto-loader, and the generated `X` / `X__Output` types describe what it sends and
 * receives under exactly those options (camelCase fields, 64-bit ints and enums as strings,
 * defaults filled in, oneofs named).
 */
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of `cri/v1/api.proto`. Resolved against this module, which lives one level below
 * the package root both as `src/index.ts` and as `dist/index.js`.
 */
export const CRI_PROTO_PATH: string = fileURLToPath(new URL('../cri/v1/api.proto', import.meta.url));

/** Fully qualified service names, as they appear in gRPC method paths. */
export const RUNTIME_SERVICE_NAME = 'runtime.v1.RuntimeService';
export const IMAGE_SERVICE_NAME = 'runtime.v1.ImageService';

/**
 * @grpc/proto-loader options the generated types were produced with (proto/scripts/gen.mjs).
 * Changing one here without regenerating makes the types lie.
 */
export const CRI_LOADER_OPTIONS = {
  keepCase: false,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

export * from './gen/index.js';
