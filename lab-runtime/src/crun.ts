/**
 * The crun binary a lab containerd's `crun` runtime handler runs (containerd-config.ts).
 *
 * crun refuses hybrid cgroup hosts (v1 controllers under /sys/fs/cgroup, a cgroup2 hierarchy at
 * /sys/fs/cgroup/unified) as soon as that cgroup2 hierarchy holds a controller ("cgroups in
 * hybrid mode not supported"); some VMs boot that way, with hugetlb on cgroup2. There the lab
 * runs crun through a small wrapper that hides the unified hierarchy in a private mount
 * namespace, so crun manages the v1 controllers as on a legacy host (what runc does there too).
 * The host's mounts are not changed. On a cgroup v2 or plain v1 host crun runs as is.
 */
import { existsSync, readFileSync } from 'node:fs';
import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CRUN_BINARY } from './containerd-config.js';

const UNIFIED = '/sys/fs/cgroup/unified';

/** True on a hybrid host whose cgroup2 hierarchy holds controllers (crun would refuse to run). */
export function hybridCgroupsWithV2Controllers(root = '/sys/fs/cgroup'): boolean {
  if (existsSync(join(root, 'cgroup.controllers'))) return false; // cgroup v2 unified host
  const controllers = join(root, 'unified', 'cgroup.controllers');
  try {
    return readFileSync(controllers, 'utf8').trim() !== '';
  } catch {
    return false; // no unified hierarchy: a plain v1 host
  }
}

/** The wrapper's text: crun in a private mount namespace without the cgroup2 hierarchy. */
export function renderCrunWrapper(crun = CRUN_BINARY): string {
  return `#!/bin/sh
# Written by nodelet (lab-runtime). HACK(hybrid cgroups): crun refuses hybrid hosts whose cgroup2
# hierarchy holds controllers; run it in a private mount namespace without that hierarchy.
exec /usr/bin/unshare --mount --propagation private /bin/sh -c 'umount -l ${UNIFIED} && exec "$0" "$@"' ${crun} "$@"
`;
}

/**
 * The BinaryName for the lab's `crun` handler in `dir`: undefined without crun, the wrapper on a
 * hybrid host with cgroup2 controllers, else crun itself.
 */
export async function crunForLab(dir: string): Promise<string | undefined> {
  if (!existsSync(CRUN_BINARY)) return undefined;
  if (!hybridCgroupsWithV2Controllers()) return CRUN_BINARY;
  const wrapper = join(dir, 'crun-private-cgroups');
  await writeFile(wrapper, renderCrunWrapper());
  await chmod(wrapper, 0o755);
  return wrapper;
}
