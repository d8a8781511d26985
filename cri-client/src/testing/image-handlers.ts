/** runtime.v1.ImageService handlers over the shared runtime model's image store. */
import type * as p from '@nodelet/proto';
import { imageView, nowNs } from '../fake-runtime/index.js';
import type { FakeRuntimeService } from './fake-runtime-service.js';

export function fakeImageHandlers(state: FakeRuntimeService): Record<string, (req: never) => object> {
  return {
    ListImages: (req: p.ListImagesRequest) => ({ images: state.listImages(req.filter?.image?.image) }),
    ImageStatus: (req: p.ImageStatusRequest) => {
      const img = state.findImage(req.image?.image);
      return { image: img ? imageView(img) : null, info: img && req.verbose ? { info: JSON.stringify({ chainID: img.id }) } : {} };
    },
    PullImage: (req: p.PullImageRequest) => ({ imageRef: state.pullImage(req.image?.image ?? '') }),
    RemoveImage: (req: p.RemoveImageRequest) => (state.removeImage(req.image?.image), {}),
    ImageFsInfo: () => ({
      imageFilesystems: [
        { timestamp: nowNs().toString(), fsId: { mountpoint: '/fake/io.containerd.snapshotter.v1.overlayfs' }, usedBytes: { value: String(state.usedBytes()) }, inodesUsed: { value: String(state.images.size * 10) } },
      ],
    }),
  };
}
