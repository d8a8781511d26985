/**
 * What a Debian package's maintainer scripts and a container image's Dockerfile would add on top
 * of the unpacked files: the image config (entrypoint, command, user, ports, stop signal), the
 * system users the postinst creates, and the few files it sets up. Only packages listed here get
 * a config of their own; any other package gives an image whose command is `sh`.
 */
import { copyFile, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';

/** The runtime part of an image config, as buildImage takes it. */
export interface RecipeConfig {
  entrypoint?: string[];
  cmd?: string[];
  env?: string[];
  workingDir?: string;
  user?: string;
  exposedPorts?: string[];
  stopSignal?: string;
}

export interface Recipe {
  config: RecipeConfig;
  /** passwd/group lines for the system users the package's postinst would add. */
  users?: { passwd: string; group: string }[];
  /** Post-install steps on the unpacked root (what the postinst does that the image needs). */
  prepare?(root: string): Promise<void>;
}

/** The recipes by package name. */
export const RECIPES: Readonly<Record<string, Recipe>> = {
  nginx: {
    // As the nginx image runs it: in the foreground, logs to the container's stdout/stderr, graceful stop on SIGQUIT.
    config: { entrypoint: ['nginx', '-g', 'daemon off;'], exposedPorts: ['80/tcp'], stopSignal: 'SIGQUIT' },
    async prepare(root) {
      // nginx-common's postinst: enable the default site, install the welcome page.
      await link(root, '/etc/nginx/sites-enabled/default', '/etc/nginx/sites-available/default');
      await mkdir(join(root, 'var/www/html'), { recursive: true });
      await copyFile(join(root, 'usr/share/nginx/html/index.html'), join(root, 'var/www/html/index.nginx-debian.html'));
      await mkdir(join(root, 'var/log/nginx'), { recursive: true });
      await link(root, '/var/log/nginx/access.log', '/dev/stdout');
      await link(root, '/var/log/nginx/error.log', '/dev/stderr');
      await mkdir(join(root, 'run'), { recursive: true });
    },
  },
  'redis-server': {
    // Layers hold root-owned files only (tar-writer.ts), so redis runs as root with its data in /data.
    // Protected mode would refuse every client from outside the pod, as the redis image's build turns it off.
    config: { cmd: ['redis-server', '--protected-mode', 'no', '--dir', '/data'], workingDir: '/data', exposedPorts: ['6379/tcp'] },
    async prepare(root) {
      await mkdir(join(root, 'data'), { recursive: true });
    },
  },
  python3: {
    config: { cmd: ['python3'] },
  },
};

/** The recipe of the first listed package that has one. */
export function recipeFor(packages: readonly string[]): Recipe | undefined {
  for (const p of packages) {
    const r = RECIPES[p];
    if (r) return r;
  }
  return undefined;
}

async function link(root: string, at: string, target: string): Promise<void> {
  await mkdir(join(root, at, '..'), { recursive: true });
  await symlink(target, join(root, at));
}
