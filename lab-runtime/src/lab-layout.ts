/**
 * Where the lab of `make up` (`nodelet lab up`) keeps everything: the one place that knows, so
 * `nodelet cri` without -r, `nodelet runtime`, `doctor`, `audit`, `image` and the lab commands all
 * find the same containerd, registry, image store and kubeconfig.
 *
 *   /var/lib/nodelet/lab/containerd/containerd.sock   the lab runtime (lab-node.ts)
 *   /var/lib/nodelet/lab/server/admin.kubeconfig      the admin kubeconfig `nodelet server` writes
 *   /var/lib/nodelet/lab/agent.yaml                   the first node's agent configuration
 *   127.0.0.1:5000                                    the registry `nodelet server` runs
 *   /var/lib/nodelet/images                           the image store that registry serves
 */
import { join } from 'node:path';
import { DEFAULT_IMAGE_STORE } from '@nodelet/oci';

/** The lab's state dir (`nodelet lab up --state-dir`). */
export const DEFAULT_LAB_STATE_DIR = '/var/lib/nodelet/lab';
/** `nodelet server`'s registry (docs/architecture.md, processes). */
export const DEFAULT_REGISTRY = '127.0.0.1:5000';

/** The well-known files of a lab with state dir `stateDir`. */
export function labLayout(stateDir: string = DEFAULT_LAB_STATE_DIR) {
  const containerd = join(stateDir, 'containerd');
  return {
    stateDir,
    /** The lab runtime's dir (`nodelet runtime --dir`). */
    containerd,
    runtimeEndpoint: `unix://${join(containerd, 'containerd.sock')}`,
    server: join(stateDir, 'server'),
    adminKubeconfig: join(stateDir, 'server', 'admin.kubeconfig'),
    auditLog: join(stateDir, 'server', 'audit.log'),
    agentConfig: join(stateDir, 'agent.yaml'),
    registry: DEFAULT_REGISTRY,
    imageStore: DEFAULT_IMAGE_STORE,
  };
}

/** The `make up` lab's runtime dir: `nodelet runtime up|down|status` default to the lab's own containerd. */
export const DEFAULT_LAB_RUNTIME_DIR = labLayout().containerd;
