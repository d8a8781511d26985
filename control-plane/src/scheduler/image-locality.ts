/**
 * ImageLocality score: nodes that already have the pod's images score higher, in proportion to
 * the images' sizes and damped by how many nodes have them (so one image everywhere does not
 * pull every pod to the same place). Upstream's rule:
 *
 *   sum = Σ over the pod's containers and init containers whose image (":latest" added when it
 *         has no tag or digest) is in node.status.images: size × nodesWithImage / allNodes
 *   score = 100 × (clamp(sum, 23 MiB, 1000 MiB × containers) − 23 MiB) / (1000 MiB × containers − 23 MiB)
 *
 * Weight 1 in the default profile. The cache keeps the number of nodes reporting each image.
 */
import type { ClusterView } from './cluster-view.js';
import type { NodeInfo } from './node-info.js';
import type { ScorePlugin } from './scores.js';
import { MAX_NODE_SCORE } from './scores.js';

const MB = 1024 * 1024;
export const IMAGE_MIN_THRESHOLD = 23 * MB;
export const IMAGE_MAX_CONTAINER_THRESHOLD = 1000 * MB;
export const IMAGE_LOCALITY_WEIGHT = 1;

/** Upstream normalizedImageName: an image without a tag (after the last "/") gets ":latest". */
export function normalizedImageName(name: string): string {
  return name.lastIndexOf(':') <= name.lastIndexOf('/') ? `${name}:latest` : name;
}

export function imageLocalityScore(view: ClusterView): ScorePlugin {
  return {
    name: 'ImageLocality',
    weight: IMAGE_LOCALITY_WEIGHT,
    score({ pod }, feasible) {
      const spec = pod.spec;
      const images = [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])].map((c) => normalizedImageName(c.image ?? ''));
      if (images.length === 0) return undefined;
      const total = view.list.length;
      const maxThreshold = IMAGE_MAX_CONTAINER_THRESHOLD * images.length;
      let any = false;
      const out = feasible.map((n: NodeInfo) => {
        const sizes = n.imageSizes;
        if (sizes.size === 0) return 0;
        let sum = 0;
        for (const img of images) {
          const size = sizes.get(img);
          if (size === undefined) continue;
          any = true;
          sum += Math.trunc(size * (view.imageNodeCount(img) / total));
        }
        const clamped = Math.min(Math.max(sum, IMAGE_MIN_THRESHOLD), maxThreshold);
        return Math.trunc((MAX_NODE_SCORE * (clamped - IMAGE_MIN_THRESHOLD)) / (maxThreshold - IMAGE_MIN_THRESHOLD));
      });
      return any ? out : undefined;
    },
  };
}
