/**
 * The production equivalent of the lab runtime: configure the distro's containerd (run by
 * systemd) instead of starting our own. containerd 1.6 loads `imports` files and merges them
 * per plugin section (a whole `[plugins."io.containerd.grpc.v1.cri"]` table replaces the main
 * file's), so the drop-in carries the complete CRI section nodelet needs:
 *
 *   /etc/containerd/config.toml                     + imports = ["/etc/containerd/conf.d/*.toml"]
 *   /etc/containerd/conf.d/50-nodelet.toml          the CRI section
 *   /etc/containerd/certs.d/<registry>/hosts.toml   the lab registry over plain HTTP
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { renderCriSection, renderHostsToml, tomlString } from './containerd-config.js';
import { DEFAULT_CNI_BIN_DIR, DEFAULT_CNI_CONF_DIR, defaultSandboxImage } from './lab-node.js';
import { DEFAULT_REGISTRY } from './lab-layout.js';

export interface DropinOptions {
  /** containerd's config directory; default /etc/containerd. */
  etcDir?: string;
  registry?: string;
  sandboxImage?: string;
  cniBinDir?: string;
  cniConfDir?: string;
  /** Default: true when systemd is PID 1 (runc's systemd driver talks to it). */
  systemdCgroup?: boolean;
}

export interface DropinFile {
  path: string;
  content: string;
}

export const DROPIN_NAME = '50-nodelet.toml';

export function renderDropin(o: DropinOptions = {}): DropinFile[] {
  const etc = o.etcDir ?? '/etc/containerd';
  const registry = o.registry ?? DEFAULT_REGISTRY;
  const certsDir = join(etc, 'certs.d');
  const cri = renderCriSection({
    sandboxImage: o.sandboxImage ?? defaultSandboxImage(registry),
    cniBinDir: o.cniBinDir ?? DEFAULT_CNI_BIN_DIR,
    cniConfDir: o.cniConfDir ?? DEFAULT_CNI_CONF_DIR,
    certsDir,
    systemdCgroup: o.systemdCgroup ?? existsSync('/run/systemd/system'),
  });
  return [
    { path: join(etc, 'conf.d', DROPIN_NAME), content: `# Written by nodelet: the CRI settings a nodelet agent needs (replaces the main file's CRI section).\nversion = 2\n\n${cri}` },
    { path: join(certsDir, registry, 'hosts.toml'), content: renderHostsToml(registry) },
  ];
}

/** `imports = [...]` line containerd needs in its main config to load the drop-in dir. */
export function importsLine(etcDir = '/etc/containerd'): string {
  return `imports = [${tomlString(join(etcDir, 'conf.d', '*.toml'))}]`;
}

/**
 * Adds the imports line to `config` text when missing; returns undefined when nothing changes.
 * containerd reads top-level keys only before the first table, so the line goes right after
 * `version = 2` (or first). An existing `imports` key is extended, not duplicated.
 */
export function withImports(config: string, etcDir = '/etc/containerd'): string | undefined {
  const pattern = join(etcDir, 'conf.d', '*.toml');
  const lines = config.split('\n');
  const at = lines.findIndex((l) => /^\s*imports\s*=/.test(l));
  if (at >= 0) {
    const line = lines[at]!;
    if (line.includes(tomlString(pattern))) return undefined;
    const open = line.indexOf('[');
    const close = line.lastIndexOf(']');
    if (open < 0 || close < open) return undefined; // a multi-line array: leave it to the operator
    const inner = line.slice(open + 1, close).trim();
    lines[at] = `${line.slice(0, open + 1)}${inner}${inner ? ', ' : ''}${tomlString(pattern)}${line.slice(close)}`;
    return lines.join('\n');
  }
  const version = lines.findIndex((l) => /^\s*version\s*=/.test(l));
  lines.splice(version + 1, 0, importsLine(etcDir));
  if (version < 0) lines.unshift('version = 2');
  return lines.join('\n');
}

export interface DropinInstall {
  written: string[];
  /** True when the main config gained the imports line. */
  importsAdded: boolean;
}

/** Writes the drop-in files and the imports line. Idempotent; containerd must be restarted after. */
export async function installDropin(o: DropinOptions = {}): Promise<DropinInstall> {
  const etc = o.etcDir ?? '/etc/containerd';
  const written: string[] = [];
  for (const f of renderDropin(o)) {
    await mkdir(dirname(f.path), { recursive: true });
    const old = existsSync(f.path) ? await readFile(f.path, 'utf8') : undefined;
    if (old === f.content) continue;
    await atomicWrite(f.path, f.content);
    written.push(f.path);
  }
  const main = join(etc, 'config.toml');
  const current = existsSync(main) ? await readFile(main, 'utf8') : 'version = 2\n';
  const updated = withImports(current, etc);
  if (updated !== undefined) {
    await atomicWrite(main, updated);
    written.push(main);
  }
  return { written, importsAdded: updated !== undefined };
}

async function atomicWrite(path: string, content: string): Promise<void> {
  const tmp = `${path}.nodelet-tmp`;
  await writeFile(tmp, content, { mode: 0o644 });
  await rename(tmp, path);
}
