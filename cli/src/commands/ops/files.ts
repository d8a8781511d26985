/**
 * Idempotent file installation with a manifest, so `nodelet uninstall` removes exactly what
 * `nodelet install` wrote (and nothing an operator put there by hand).
 *
 * The manifest lives at <stateDir>/install-manifest.json and records every path with the
 * sha256 of what we wrote. A second install with the same inputs changes nothing.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, rmdirSync, writeFileSync, statSync } from 'node:fs';
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
  /** Directories install created (removed again when empty). */
  dirs?: string[];
  /** Units install enabled that were not enabled before (uninstall disables them). */
  enabledUnits?: string[];
}

/** sha256 of an entry the agent writes at run time (removed on uninstall whatever it holds). */
export const AGENT_MANAGED = 'agent-managed';

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
      this.#mkdirs(dirname(abs));
      const tmp = `${p}.nodelet-tmp`;
      writeFileSync(tmp, content, { mode });
      chmodSync(tmp, mode);
      renameSync(tmp, p);
    }
    this.#record({ path: abs, sha256: sha(content), mode, component });
    return outcome;
  }

  /** Records a file the agent will write itself (its CNI conflist, nodelet-cni), so uninstall removes it. */
  adopt(component: string, abs: string): void {
    this.#mkdirs(dirname(abs));
    this.#record({ path: abs, sha256: AGENT_MANAGED, mode: 0, component });
  }

  /** Remembers that install enabled `unit` (it was not enabled before). */
  recordEnabled(unit: string): void {
    const u = new Set(this.#manifest.enabledUnits ?? []);
    u.add(unit);
    this.#manifest.enabledUnits = [...u];
  }

  get enabledUnits(): string[] {
    return [...(this.#manifest.enabledUnits ?? [])];
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
        if (e.sha256 !== AGENT_MANAGED && sha(readFileSync(p)) !== e.sha256) {
          keptModified.push(e.path);
          continue;
        }
        rmSync(p, { force: true });
      }
      removed.push(e.path);
    }
    this.#manifest.files = this.#manifest.files.filter((f) => !removed.includes(f.path) || (component !== undefined && f.component !== component));
    // Directories we created go too, deepest first, when nothing else lives in them.
    for (const d of [...(this.#manifest.dirs ?? [])].sort((a, b) => b.length - a.length)) {
      try {
        rmdirSync(this.path(d));
      } catch (err) {
        // Something else lives there (ENOTEMPTY): it stays ours to retry on the next uninstall.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') continue;
      }
      this.#manifest.dirs = (this.#manifest.dirs ?? []).filter((x) => x !== d);
    }
    this.save();
    return { removed, keptModified };
  }

  save(): void {
    mkdirSync(dirname(this.#manifestPath), { recursive: true });
    if (this.#manifest.files.length === 0 && !this.#manifest.dirs?.length && !this.#manifest.enabledUnits?.length) {
      rmSync(this.#manifestPath, { force: true });
      return;
    }
    writeFileSync(this.#manifestPath, JSON.stringify(this.#manifest, null, 2) + '\n', { mode: 0o600 });
  }

  #mkdirs(absDir: string): void {
    const missing: string[] = [];
    for (let d = absDir; d !== dirname(d) && !existsSync(this.path(d)); d = dirname(d)) missing.push(d);
    if (missing.length === 0) return;
    mkdirSync(this.path(absDir), { recursive: true });
    this.#manifest.dirs = [...new Set([...(this.#manifest.dirs ?? []), ...missing])];
  }

  #record(e: ManifestEntry): void {
    this.#manifest.files = this.#manifest.files.filter((f) => f.path !== e.path);
    this.#manifest.files.push(e);
  }
}
