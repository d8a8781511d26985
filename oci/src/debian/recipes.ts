/**
 * What a Debian package's maintainer scripts and a container image's Dockerfile would add on top
 * of the unpacked files: the image config (entrypoint, command, user, ports, stop signal), the
 * system users the postinst creates, and the few files it sets up. Only packages listed here get
 * a config of their own; for any other the builder asks for a command (--entrypoint, --cmd).
 */
import { chmod, copyFile, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AgentError } from '@nodelet/base';
import type { SystemAccounts } from './users.js';

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

/** `chown USER:GROUP PATH` and `chmod MODE PATH` as the postinst does them (names from the image's /etc/passwd and /etc/group). */
export interface RecipeOwner {
  path: string;
  user: string;
  group: string;
  mode: number;
}

export interface Recipe {
  config: RecipeConfig;
  /** The system users and groups the package's postinst would add (users.ts allocates their ids). */
  accounts?: SystemAccounts;
  /** Ownership the postinst sets; each path exists once `prepare` ran. */
  owners?: RecipeOwner[];
  /**
   * Post-install steps on the unpacked root (what the postinst does that the image needs); may
   * return config that depends on the packages' files (a versioned PATH).
   */
  prepare?(root: string): Promise<RecipeConfig | void>;
}

const POSTGRES_ENTRYPOINT = '/usr/local/bin/postgres-entrypoint';

/**
 * The postgres image's entrypoint (dash; the image has no coreutils). POSTGRES_PASSWORD, when set,
 * becomes the password of the postgres role at initdb; local connections are trusted, TCP ones
 * need the password (scram-sha-256).
 */
const POSTGRES_ENTRYPOINT_SCRIPT = `#!/bin/sh
# Written by nodelet image build --debian postgresql (docs/images.md).
set -e
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -n "$POSTGRES_PASSWORD" ]; then
    printf '%s\\n' "$POSTGRES_PASSWORD" | initdb -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 --pwfile=/dev/stdin
  else
    initdb -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256
  fi
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
`;

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
    // redis runs as root with its data in /data (a volume there needs no fsGroup).
    // Protected mode would refuse every client from outside the pod, as the redis image's build turns it off.
    config: { cmd: ['redis-server', '--protected-mode', 'no', '--dir', '/data'], workingDir: '/data', exposedPorts: ['6379/tcp'] },
    async prepare(root) {
      await mkdir(join(root, 'data'), { recursive: true });
    },
  },
  python3: {
    config: { cmd: ['python3'] },
  },
  postgresql: {
    // As the postgres image runs it: as postgres, initdb on an empty PGDATA, then postgres in the foreground
    // listening on every address; SIGINT is postgres's fast shutdown (SIGTERM would wait for every client).
    config: {
      entrypoint: [POSTGRES_ENTRYPOINT],
      user: 'postgres',
      exposedPorts: ['5432/tcp'],
      stopSignal: 'SIGINT',
    },
    // postgresql-common's postinst: adduser --system --group postgres, adduser postgres ssl-cert (ssl-cert's postinst adds the group).
    accounts: {
      groups: ['ssl-cert'],
      users: [{ name: 'postgres', home: '/var/lib/postgresql', shell: '/bin/bash', gecos: 'PostgreSQL administrator,,,', groups: ['ssl-cert'] }],
    },
    owners: [
      { path: '/var/lib/postgresql', user: 'postgres', group: 'postgres', mode: 0o755 },
      // PGDATA's parent, where a volume goes: PGDATA is a directory inside it that initdb makes (0700, as
      // postgres insists), so a volume root owned by root with an fsGroup (docs/images.md) works.
      { path: '/var/lib/postgresql/data', user: 'postgres', group: 'postgres', mode: 0o700 },
      { path: '/etc/postgresql', user: 'postgres', group: 'postgres', mode: 0o755 },
      { path: '/var/log/postgresql', user: 'root', group: 'postgres', mode: 0o1775 },
      { path: '/run/postgresql', user: 'postgres', group: 'postgres', mode: 0o2775 },
    ],
    async prepare(root) {
      const versions = (await readdir(join(root, 'usr/lib/postgresql'))).filter((v) => /^\d+$/.test(v));
      if (versions.length !== 1) throw new AgentError('ERR_INTERNAL', `want one PostgreSQL server version in /usr/lib/postgresql, found ${versions.join(', ') || 'none'}`);
      for (const d of ['var/lib/postgresql/data', 'etc/postgresql', 'var/log/postgresql', 'run/postgresql']) await mkdir(join(root, d), { recursive: true });
      const script = join(root, POSTGRES_ENTRYPOINT);
      await mkdir(join(script, '..'), { recursive: true });
      await writeFile(script, POSTGRES_ENTRYPOINT_SCRIPT);
      await chmod(script, 0o755);
      return {
        env: [`PATH=/usr/lib/postgresql/${versions[0]}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`, 'PGDATA=/var/lib/postgresql/data/pgdata', 'LANG=C.UTF-8'],
      };
    },
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
