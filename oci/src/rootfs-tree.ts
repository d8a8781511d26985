/**
 * The file tree of one image layer, assembled from host files without copying them: each node
 * remembers where its bytes come from, and `entries()` lists the tree in a fixed order for
 * tarStream. Modes are explicit (a missing parent directory is 0755 whatever the umask); a node
 * added later replaces one at the same path, as copying onto a staging directory would.
 *
 *   addTree/addFile/addSymlink ──▶ Map<"usr/local/bin/x", node> ──entries()──▶ sorted TarEntry[]
 */
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { AgentError } from '@nodelet/base';
import type { TarEntry } from './tar-writer.js';

type Node = ({ kind: 'dir'; mode: number } | { kind: 'file'; mode: number; size: number; source: string } | { kind: 'symlink'; target: string }) & { uid?: number; gid?: number };

/** Numeric owner (and optionally mode) of one path in the image, as `chown`/`chmod` in the image would set it. */
export interface PathOwner {
  /** Absolute path inside the image. */
  path: string;
  uid: number;
  gid: number;
  /** Permission bits incl. setuid/setgid/sticky; unchanged when not given. Ignored for symlinks. */
  mode?: number;
  /** Skip the path when it is not in the image, rather than refuse. */
  optional?: boolean;
}

const PARENT_MODE = 0o755;

export class RootfsTree {
  readonly #nodes = new Map<string, Node>();

  /**
   * Adds the host directory `from` at `to` (`/` for the image root): directories and files keep
   * their host modes, symlinks their targets. Sockets, FIFOs and devices are refused.
   */
  async addTree(from: string, to: string, signal?: AbortSignal): Promise<void> {
    const root = to === '/' ? '' : imagePath(to);
    let st;
    try {
      st = await stat(from);
    } catch (err) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read directory "${from}" for the image: ${(err as Error).message}`, { cause: err });
    }
    if (!st.isDirectory()) throw new AgentError('ERR_INVALID_ARGUMENT', `"${from}" is not a directory`);
    if (root) this.#put(root, { kind: 'dir', mode: st.mode & 0o7777 });
    await this.#walk(from, root, signal);
  }

  async #walk(dir: string, at: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    for (const name of (await readdir(dir)).sort()) {
      const src = join(dir, name);
      const dest = at ? `${at}/${name}` : name;
      const st = await lstat(src);
      if (st.isDirectory()) {
        this.#put(dest, { kind: 'dir', mode: st.mode & 0o7777 });
        await this.#walk(src, dest, signal);
      } else if (st.isFile()) {
        this.#put(dest, { kind: 'file', mode: st.mode & 0o7777, size: st.size, source: src });
      } else if (st.isSymbolicLink()) {
        this.#put(dest, { kind: 'symlink', target: await readlink(src) });
      } else {
        throw new AgentError('ERR_INVALID_ARGUMENT', `"${src}" is not a regular file, directory or symlink; images built by nodelet cannot hold it`);
      }
    }
  }

  /** Adds host file `from` (symlinks followed) at `to`, with `mode` or the host file's mode. */
  async addFile(from: string, to: string, mode?: number): Promise<void> {
    const path = imagePath(to);
    let st;
    try {
      st = await stat(from);
    } catch (err) {
      throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read "${from}" for the image: ${(err as Error).message}`, { cause: err });
    }
    if (!st.isFile()) throw new AgentError('ERR_INVALID_ARGUMENT', `"${from}" is not a regular file`);
    this.#put(path, { kind: 'file', mode: mode ?? st.mode & 0o7777, size: st.size, source: from });
  }

  addSymlink(to: string, target: string): void {
    this.#put(imagePath(to), { kind: 'symlink', target });
  }

  /**
   * Gives `path` (already added) an owner and optionally a mode; every other entry belongs to
   * root. The tree's host files are never chowned: this only changes the tar headers.
   */
  setOwner(o: PathOwner): void {
    const path = imagePath(o.path);
    const n = this.#nodes.get(path);
    if (!n && o.optional) return;
    if (!n) throw new AgentError('ERR_INVALID_ARGUMENT', `cannot set the owner of "/${path}": it is not in the image`);
    n.uid = o.uid;
    n.gid = o.gid;
    if (o.mode !== undefined && n.kind !== 'symlink') n.mode = o.mode & 0o7777;
  }

  #put(path: string, node: Node): void {
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join('/');
      const have = this.#nodes.get(parent);
      if (!have) this.#nodes.set(parent, { kind: 'dir', mode: PARENT_MODE });
      else if (have.kind !== 'dir') throw new AgentError('ERR_INVALID_ARGUMENT', `cannot add "/${path}" to the image: "/${parent}" is not a directory`);
    }
    if (node.kind !== 'dir' && this.#nodes.get(path)?.kind === 'dir') {
      // A file or link replacing a directory replaces its subtree too.
      for (const key of this.#nodes.keys()) if (key.startsWith(`${path}/`)) this.#nodes.delete(key);
    }
    this.#nodes.set(path, node);
  }

  /**
   * The tree depth-first, each directory's children by name (byte order), parents before
   * children, as `tar --sort=name` lists a directory.
   */
  entries(): TarEntry[] {
    const paths = [...this.#nodes.keys()].sort(comparePaths);
    return paths.map((path): TarEntry => {
      const n = this.#nodes.get(path)!;
      const owner = n.uid || n.gid ? { uid: n.uid, gid: n.gid } : {};
      switch (n.kind) {
        case 'dir':
          return { type: 'dir', path, mode: n.mode, ...owner };
        case 'symlink':
          return { type: 'symlink', path, target: n.target, ...owner };
        case 'file':
          return { type: 'file', path, mode: n.mode, size: n.size, what: `"${n.source}"`, open: (signal) => createReadStream(n.source, { signal }), ...owner };
      }
    });
  }
}

/** `/usr/bin/x` → `usr/bin/x`; refuses relative paths, `/` and paths that climb out with `..`. */
function imagePath(to: string): string {
  if (!to.startsWith('/')) throw new AgentError('ERR_INVALID_ARGUMENT', `image path "${to}" must be absolute`);
  const norm = posix.normalize(to);
  if (norm === '/' || norm.split('/').includes('..')) throw new AgentError('ERR_INVALID_ARGUMENT', `image path "${to}" is not a file path inside the image`);
  return norm.replace(/^\/+|\/+$/g, '');
}

/** Component-wise byte order: `a` < `a/b` < `a-c` (a directory's subtree follows it directly). */
export function comparePaths(a: string, b: string): number {
  const pa = a.split('/');
  const pb = b.split('/');
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const c = Buffer.compare(Buffer.from(pa[i]!), Buffer.from(pb[i]!));
    if (c !== 0) return c;
  }
  return pa.length - pb.length;
}
