// @nodelet/oci: image references, OCI image layouts, deterministic image build, read-only distribution registry.
export * from './media-types.js';
export * from './digest.js';
export * from './reference.js';
export * from './layout.js';
export * from './build.js';
export * from './registry.js';
export * from './lab-images.js';
export * from './registry-list.js';
