// @nodelet/oci: image references, OCI image layouts, deterministic image build, image archives (import/export), read-only distribution registry.
export * from './media-types.js';
export * from './digest.js';
export * from './reference.js';
export * from './layout.js';
export * from './build.js';
export * from './registry.js';
export * from './lab-images.js';
export * from './registry-list.js';
export * from './store-name.js';
export * from './store-lock.js';
export * from './store-images.js';
export * from './tar-writer.js';
export * from './archive/import.js';
export * from './archive/export.js';
export * from './debian/apt.js';
export * from './debian/build-debian.js';
export * from './debian/recipes.js';
