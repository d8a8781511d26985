/**
 * OCI image-spec and Docker media types, and the JSON shapes nodelet reads and writes.
 * Values are the registered media type strings (image-spec `specs-go/v1/mediatype.go`).
 */
export const MediaType = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayer: 'application/vnd.docker.image.rootfs.diff.tar',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  dockerLayerZstd: 'application/vnd.docker.image.rootfs.diff.tar.zstd',
} as const;

/** Media types of index-like documents (a list of manifests, one per platform). */
export const INDEX_MEDIA_TYPES: ReadonlySet<string> = new Set([MediaType.ociIndex, MediaType.dockerManifestList]);

/** Layer media types nodelet stores and serves, by how the tar is compressed. */
export const LAYER_MEDIA_TYPES: Readonly<Record<'tar' | 'gzip' | 'zstd', readonly string[]>> = {
  tar: [MediaType.ociLayer, MediaType.dockerLayer],
  gzip: [MediaType.ociLayerGzip, MediaType.dockerLayerGzip],
  zstd: [MediaType.ociLayerZstd, MediaType.dockerLayerZstd],
};

/** Media types a registry serves from its manifests endpoint. */
export const MANIFEST_MEDIA_TYPES: ReadonlySet<string> = new Set([
  MediaType.ociIndex,
  MediaType.ociManifest,
  MediaType.dockerManifest,
  MediaType.dockerManifestList,
]);

/** Annotation holding the tag of an index entry (image-spec annotations.md). */
export const ANNOTATION_REF_NAME = 'org.opencontainers.image.ref.name';
/** Annotation holding the full image name, as `ctr import` / containerd read it. */
export const ANNOTATION_IMAGE_NAME = 'io.containerd.image.name';

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: Platform;
}

export interface Platform {
  architecture: string;
  os: string;
  variant?: string;
}

export interface ImageManifest {
  schemaVersion: 2;
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  schemaVersion: 2;
  mediaType?: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

/** The runtime part of an image config (image-spec config.md, `config` object). */
export interface ImageRuntimeConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  WorkingDir?: string;
  User?: string;
  Labels?: Record<string, string>;
  ExposedPorts?: Record<string, Record<string, never>>;
  StopSignal?: string;
}

export interface ImageConfig {
  architecture: string;
  os: string;
  created?: string;
  config: ImageRuntimeConfig;
  rootfs: { type: 'layers'; diff_ids: string[] };
  history?: { created?: string; created_by?: string; comment?: string; empty_layer?: boolean }[];
}

/** The OCI architecture name of this Node.js process's CPU. */
export function hostArchitecture(): string {
  switch (process.arch) {
    case 'x64':
      return 'amd64';
    case 'ia32':
      return '386';
    default:
      return process.arch; // arm64, arm, ppc64, s390x, riscv64 use the same names
  }
}
