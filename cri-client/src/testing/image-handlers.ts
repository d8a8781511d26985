/** runtime.v1.ImageService handlers over {@link FakeRuntimeService}. */
import type * as p from '@nodelet/proto';
import { nowNs, rpcError, type FakeRuntimeService, type FakeImage } from './fake-runtime-service.js';

function view(img: FakeImage): p.Image {
  return { id: img.id, repoTags: img.repoTags, repoDigests: img.repoDigests, size: String(img.size), uid: null, username: '', pinned: img.pinned ?? false };
}

export function fakeImageHandlers(state: FakeRuntimeService): Record<string, (req: never) => object> {
  return {
    ListImages: (req: p.ListImagesRequest) => {
      const want = req.filter?.image?.image;
      const images = [...state.images.values()].filter((img) => !want || state.findImage(want) === img).map(view);
      return { images };
    },
    ImageStatus: (req: p.ImageStatusRequest) => {
      const img = state.findImage(req.image?.image);
      return { image: img ? view(img) : null, info: img && req.verbose ? { info: JSON.stringify({ chainID: img.id }) } : {} };
    },
    PullImage: (req: p.PullImageRequest) => {
      const ref = req.image?.image ?? '';
      if (!ref || /\s|[A-Z]/.test(ref.split('@')[0]?.split('/').slice(0, -1).join('/') ?? '') || /\s/.test(ref)) {
        throw rpcError('UNKNOWN', `failed to pull and unpack image "${ref}": invalid reference format`);
      }
      return { imageRef: state.addImage(ref).id };
    },
    RemoveImage: (req: p.RemoveImageRequest) => {
      const img = state.findImage(req.image?.image);
      if (img) state.images.delete(img.id);
      return {};
    },
    ImageFsInfo: () => {
      let used = 0;
      for (const img of state.images.values()) used += img.size;
      return {
        imageFilesystems: [
          { timestamp: nowNs().toString(), fsId: { mountpoint: '/fake/io.containerd.snapshotter.v1.overlayfs' }, usedBytes: { value: String(used) }, inodesUsed: { value: String(state.images.size * 10) } },
        ],
      };
    },
  };
}
