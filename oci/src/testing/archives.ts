/**
 * Image archives for tests, made with the `tar` package (layers and outer archives) and the
 * Debian `zstd` binary, independently of the code under test.
 *
 * `whiteoutImage()` is a three-layer image:
 *
 *   layer 0 (tar)       base.txt, etc/gone.txt, opq/old-1.txt, opq/old-2.txt [, bin/busybox, bin/sh]
 *   layer 1 (tar+gzip)  mid.txt, opq/mid.txt
 *   layer 2 (tar+zstd)  etc/.wh.gone.txt (deletes etc/gone.txt), opq/.wh..wh..opq (empties opq/),
 *                       opq/new.txt
 *
 * so a container of it has /base.txt and /mid.txt, no /etc/gone.txt, and only new.txt in /opq.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { create } from 'tar';
import { hostArchitecture, MediaType } from '../media-types.js';

export interface TestLayer {
  /** The uncompressed tar (its digest is the diff_id). */
  tar: Buffer;
  /** The blob as stored (compressed or not). */
  blob: Buffer;
  mediaType: string;
  digest: string;
  diffId: string;
}

export interface TestImage {
  layers: TestLayer[];
  config: Buffer;
  configDigest: string;
  /** The OCI manifest of the image (what an OCI archive of it holds). */
  manifest: Buffer;
  manifestDigest: string;
}

export type ArchiveFiles = Map<string, Buffer | { symlink: string }>;

export const sha256 = (b: Buffer): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const hex = (digest: string): string => digest.slice('sha256:'.length);

/** A tar of `files` (path → content; `null` makes an empty file), made by the `tar` package. */
export async function layerTar(files: Record<string, string | null>, extra?: (dir: string) => Promise<void>): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-test-layer-'));
  try {
    for (const [path, body] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), body ?? '');
    }
    await extra?.(dir);
    const top = [...new Set([...Object.keys(files).map((p) => p.split('/')[0]!), ...(extra ? ['bin'] : [])])].sort();
    return await create({ cwd: dir, portable: true, mtime: new Date(0) }, top).concat();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function layer(tar: Buffer, compression: 'tar' | 'gzip' | 'zstd'): TestLayer {
  const blob = compression === 'gzip' ? gzipSync(tar) : compression === 'zstd' ? execFileSync('zstd', ['-q', '-c'], { input: tar }) : tar;
  const mediaType = { tar: MediaType.ociLayer, gzip: MediaType.ociLayerGzip, zstd: MediaType.ociLayerZstd }[compression];
  return { tar, blob, mediaType, digest: sha256(blob), diffId: sha256(tar) };
}

/** The three-layer whiteout image; with `busybox` (a static busybox path) it runs `busybox sleep`. */
export async function whiteoutImage(opts: { busybox?: string } = {}): Promise<TestImage> {
  const l0 = await layerTar(
    { 'base.txt': 'from the lowest layer\n', 'etc/gone.txt': 'deleted by the top layer\n', 'opq/old-1.txt': 'old 1\n', 'opq/old-2.txt': 'old 2\n' },
    opts.busybox
      ? async (dir) => {
          await mkdir(join(dir, 'bin'), { recursive: true });
          await copyFile(opts.busybox!, join(dir, 'bin', 'busybox'));
          await symlink('busybox', join(dir, 'bin', 'sh'));
        }
      : undefined,
  );
  const l1 = await layerTar({ 'mid.txt': 'from the middle layer\n', 'opq/mid.txt': 'mid\n' });
  const l2 = await layerTar({ 'etc/.wh.gone.txt': null, 'opq/.wh..wh..opq': null, 'opq/new.txt': 'from the top layer\n' });
  const layers = [layer(l0, 'tar'), layer(l1, 'gzip'), layer(l2, 'zstd')];
  const config = Buffer.from(
    JSON.stringify({
      architecture: hostArchitecture(),
      os: 'linux',
      config: { Env: ['PATH=/bin'], Cmd: ['/bin/busybox', 'sleep', '3600'] },
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.ociManifest,
      config: { mediaType: MediaType.ociConfig, digest: sha256(config), size: config.length },
      layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.blob.length })),
    }),
  );
  return { layers, config, configDigest: sha256(config), manifest, manifestDigest: sha256(manifest) };
}

/** The same layers under another config (another Cmd): a second image sharing every layer. */
export function imageVariant(img: TestImage, cmd = 'other'): TestImage {
  const config = Buffer.from(img.config.toString().replace('"sleep","3600"', `"${cmd}"`));
  const m = JSON.parse(img.manifest.toString()) as { config: { digest: string; size: number } };
  m.config = { ...m.config, digest: sha256(config), size: config.length };
  const manifest = Buffer.from(JSON.stringify(m));
  return { ...img, config, configDigest: sha256(config), manifest, manifestDigest: sha256(manifest) };
}

/** The members of an OCI image-layout archive; each image's names go to io.containerd.image.name. */
export function ociArchiveFiles(images: { image: TestImage; names: string[] }[]): ArchiveFiles {
  const files: ArchiveFiles = new Map([['oci-layout', Buffer.from('{"imageLayoutVersion":"1.0.0"}')]]);
  const manifests = [];
  for (const { image, names } of images) {
    for (const b of [image.manifest, image.config, ...image.layers.map((l) => l.blob)]) files.set(`blobs/sha256/${hex(sha256(b))}`, b);
    for (const name of names) {
      manifests.push({
        mediaType: MediaType.ociManifest,
        digest: image.manifestDigest,
        size: image.manifest.length,
        annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name.slice(name.lastIndexOf(':') + 1) },
      });
    }
  }
  files.set('index.json', Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: MediaType.ociIndex, manifests })));
  return files;
}

/** The members of a `docker save` archive in Docker 25's layout (blobs/sha256, manifest.json, repositories). */
export function dockerArchiveFiles(images: { image: TestImage; repoTags: string[] }[]): ArchiveFiles {
  const files: ArchiveFiles = new Map();
  const manifest = [];
  for (const { image, repoTags } of images) {
    for (const b of [image.config, ...image.layers.map((l) => l.blob)]) files.set(`blobs/sha256/${hex(sha256(b))}`, b);
    manifest.push({ Config: `blobs/sha256/${hex(image.configDigest)}`, RepoTags: repoTags, Layers: image.layers.map((l) => `blobs/sha256/${hex(l.digest)}`) });
  }
  files.set('manifest.json', Buffer.from(JSON.stringify(manifest)));
  files.set('repositories', Buffer.from('{}'));
  return files;
}

/**
 * A legacy `docker save` archive (Docker before 25): uncompressed `<id>/layer.tar` layers, the
 * config as `<config hex>.json`, and the last layer's file a symlink to a copy in another
 * directory, as docker writes for a layer it has already written.
 */
export function legacyDockerArchiveFiles(image: TestImage, repoTags: string[]): ArchiveFiles {
  const files: ArchiveFiles = new Map();
  const paths = image.layers.map((l, i) => {
    const id = hex(sha256(Buffer.from(`layer-${i}`)));
    files.set(`${id}/VERSION`, Buffer.from('1.0'));
    files.set(`${id}/json`, Buffer.from('{}'));
    return `${id}/layer.tar`;
  });
  image.layers.forEach((l, i) => {
    if (i === image.layers.length - 1) {
      files.set(`shared/layer.tar`, l.tar);
      files.set(paths[i]!, { symlink: '../shared/layer.tar' });
    } else files.set(paths[i]!, l.tar);
  });
  files.set(`${hex(image.configDigest)}.json`, image.config);
  files.set('manifest.json', Buffer.from(JSON.stringify([{ Config: `${hex(image.configDigest)}.json`, RepoTags: repoTags, Layers: paths }])));
  return files;
}

/** Writes `files` as a tar archive at `file` with the `tar` package. */
export async function writeTarArchive(file: string, files: ArchiveFiles): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-test-archive-'));
  try {
    for (const [path, body] of files) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      if (Buffer.isBuffer(body)) await writeFile(join(dir, path), body);
      else await symlink(body.symlink, join(dir, path));
    }
    await create({ cwd: dir, file, portable: true }, [...new Set([...files.keys()].map((p) => p.split('/')[0]!))].sort());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
