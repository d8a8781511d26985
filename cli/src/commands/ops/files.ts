/**
 * Idempotent file installation with a manifest, so `nodelet uninstall` removes exactly what
 * `nodelet install` wrote (and nothing an operator put there by hand).
 *
 * The manifest lives at <stateDir>/install-manifest.json and records every path with the
 * sha256 of what we wrote. A second install with the same inputs changes nothing.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface ManifestEntry {
  path: string;
  sha256: string;
  mode: number;
  /** The component that installed it (server | agent). */
  component: string;
}

export interface Manifest {
  version: 1;
  files: ManifestEntry[];
}

export type WriteOutcome = 'created' | 'updated' | 'unchanged';

const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');

export class InstallRoot {
  readonly #root: string;
  readonly #manifestPath: string;
  #manifest: Manifest;

  /** `root` prefixes every absolute path ("/" in production, a temp dir in tests). */
  constructor(opts: { root?: string; stateDir?: string }) {
    this.#root = opts.root ?? '/';
    this.#manifestPath = this.path(join(opts.stateDir ?? '/var/lib/nodelet', 'install-manifest.json'));
    this.#manifest = existsSync(this.#manifestPath)
      ? (JSON.parse(readFileSync(this.#manifestPath, 'utf8')) as Manifest)
      : { version: 1, files: [] };
  }

  path(abs: string): string {
    return this.#root === '/' ? abs : join(this.#root, abs);
  }

  /** Writes `content` to `abs` atomically unless it already holds exactly that; records it. */
  write(component: string, abs: string, content: string, mode = 0o644): WriteOutcome {
    const p = this.path(abs);
    let outcome: WriteOutcome = 'created';
    if (existsSync(p)) {
      const same = sha(readFileSync(p)) === sha(content) && (statSync(p).mode & 0o777) === mode;
      outcome = same ? 'unchanged' : 'updated';
    }
    if (outcome !== 'unchanged') {
      mkdirSync(dirname(p), { recursive: true });
      const tmp = `${p}.nodelet-tmp`;
      writeFileSync(tmp, content, { mode });
      chmodSync(tmp, mode);
      renameSync(tmp, p);
    }
    this.#record({ path: abs, sha256: sha(content), mode, component });
    return outcome;
  }

  entries(component?: string): ManifestEntry[] {
    return this.#manifest.files.filter((f) => !component || f.component === component);
  }

  /** Removes the files of `component` (all when undefined) that still hold what we wrote. */
  remove(component?: string): { removed: string[]; keptModified: string[] } {
    const removed: string[] = [];
    const keptModified: string[] = [];
    for (const e of this.entries(component)) {
      const p = this.path(e.path);
      if (existsSync(p)) {
        if (sha(readFileSync(p)) !== e.sha256) {
          keptModified.push(e.path);
          continue;
        }
        rmSync(p, { force: true });
      }
      removed.push(e.path);
    }
    this.#manifest.files = this.#manifest.files.filter((f) => !removed.includes(f.path) || (component !== undefined && f.component !== component));
    this.save();
    return { removed, keptModified };
  }

  save(): void {
    mkdirSync(dirname(this.#manifestPath), { recursive: true });
    if (this.#manifest.files.length === 0) {
      rmSync(this.#manifestPath, { force: true });
      return;
    }
    writeFileSync(this.#manifestPath, JSON.stringify(this.#manifest, null, 2) + '\n', { mode: 0o600 });
  }

  #record(e: ManifestEntry): void {
    this.#manifest.files = this.#manifest.files.filter((f) => f.path !== e.path);
    this.#manifest.files.push(e);
  }
}
