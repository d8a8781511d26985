/**
 * `nodelet image build|ls|serve` (+ import|export|inspect|rm in image/store-commands.ts): offline
 * images (docs/images.md). `build` turns files and directories into a deterministic OCI image in
 * an image store (an OCI layout directory), `ls` lists a store, `serve` runs the read-only
 * registry over a store. The work is done by @nodelet/oci; this file parses arguments and
 * formats output.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { DEFAULT_REGISTRY } from '@nodelet/lab-runtime';
import {
  buildDebianImage,
  buildImage,
  checkDebianBase,
  DEFAULT_DEB_CACHE,
  DEFAULT_IMAGE_STORE,
  DEFAULT_LAB_IMAGE_DIR,
  ensureLabImages,
  imageContentSize,
  listImages,
  listRegistryImages,
  RECIPES,
  startRegistry,
} from '@nodelet/oci';
import { tabwrite } from './cri/format.js';
import { consoleLogger, formatBytes, parseDirSpec, parseFileSpec, parseImageName, parseWords } from './image/args.js';
import { collect, out } from './cri/context.js';
import { registerStoreCommands } from './image/store-commands.js';


interface BuildOptions {
  store: string;
  file?: string[];
  dir?: string[];
  link?: string[];
  entrypoint?: string;
  cmd?: string;
  env?: string[];
  workdir?: string;
  user?: string;
  base?: string;
  baseStore?: string;
  lab?: boolean;
  debian?: string;
  from?: string;
  packages?: string;
  debCache: string;
}

/** Options that add files by hand; a Debian build takes its root from the packages (config options still apply). */
const FILE_OPTIONS = ['file', 'dir', 'link', 'base', 'baseStore'] as const;

export function register(program: Command): void {
  const image = program.command('image').description('build, import, export, list and serve offline OCI images');

  image
    .command('build')
    .description('build NAME[:TAG] from files and directories into an image store (deterministic: same input, same digest)')
    .argument('[name]', 'repository name and tag, e.g. lab/web:v1 (no registry host)')
    .option('--store <dir>', 'image store (OCI layout directory)', DEFAULT_IMAGE_STORE)
    .option('-f, --file <src:dest[:mode]>', 'add a file, e.g. ./app:/usr/bin/app:0755 (repeatable)', collect)
    .option('-d, --dir <src:dest>', 'add a directory tree, e.g. ./www:/var/www (repeatable)', collect)
    .option('-l, --link <path:target>', 'add a symlink, e.g. /bin/sh:busybox (repeatable)', collect)
    .option('--entrypoint <words>', 'ENTRYPOINT: a JSON array or space-separated words')
    .option('--cmd <words>', 'CMD: a JSON array or space-separated words')
    .option('-e, --env <KEY=VALUE>', 'environment variable (repeatable; default PATH only)', collect)
    .option('-w, --workdir <dir>', 'working directory')
    .option('-u, --user <user>', 'user (uid[:gid] or name)')
    .option('--base <name:tag>', 'build on top of this image (its layers and config), e.g. busybox:latest')
    .option('--base-store <dir>', 'image store holding --base (default: --store)')
    .option('--lab', 'build the lab images (pause:3.9 and busybox:latest) into the store instead')
    .option('--debian <package>', `build from Debian packages: PACKAGE and its dependencies from this machine's apt mirror, with the package's usual entrypoint, user and ports (${Object.keys(RECIPES).join(', ')}; others need --entrypoint or --cmd); NAME defaults to the package`)
    .option('--from <base>', "with --packages: build from Debian packages on this base, e.g. debian:bookworm (the release this machine's apt serves); NAME defaults to the first package")
    .option('--packages <list>', 'Debian packages to install, comma-separated (e.g. nginx,ca-certificates), with --from or after --debian PACKAGE')
    .option('--deb-cache <dir>', 'with --debian/--from: where downloaded .debs are kept (a cached build needs no network)', DEFAULT_DEB_CACHE)
    .action(async (name: string | undefined, o: BuildOptions) => {
      const signal = AbortSignal.timeout(600_000);
      if (o.packages !== undefined && !o.debian && !o.from) throw new Error('--packages goes with --from debian:RELEASE or --debian PACKAGE');
      if (o.debian || o.from) {
        const flag = o.debian ? '--debian' : '--from';
        const hand = FILE_OPTIONS.filter((k) => o[k] !== undefined);
        if (o.lab || hand.length) throw new Error(`${flag} builds the image from Debian packages alone: drop ${o.lab ? '--lab' : hand.map((k) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`).join(', ')}`);
        if (o.from) checkDebianBase(o.from, await readFile('/etc/os-release', 'utf8'));
        const packages = [...(o.debian ? [o.debian] : []), ...(o.packages ?? '').split(',').map((p) => p.trim()).filter(Boolean)];
        if (packages.length === 0) throw new Error('--from needs the packages to install: --packages a,b,c');
        const { repository, tag } = parseImageName(name ?? packages[0]!);
        const config = {
          ...(o.entrypoint ? { entrypoint: parseWords(o.entrypoint) } : {}),
          ...(o.cmd ? { cmd: parseWords(o.cmd) } : {}),
          ...(o.env ? { env: o.env } : {}),
          ...(o.workdir ? { workingDir: o.workdir } : {}),
          ...(o.user ? { user: o.user } : {}),
        };
        const onProgress = (step: string): void => void process.stderr.write(`${step}\n`);
        const built = await buildDebianImage({ store: o.store, name: repository, tag, packages, config, cacheDir: o.debCache, signal, onProgress });
        out(`${repository}:${tag} ${built.manifest.digest} (${built.installed.length} Debian packages)\n`);
        return;
      }
      if (o.lab) {
        const r = await ensureLabImages(o.store, { signal });
        out(`${r.pause.name}:${r.pause.tag} ${r.pause.digest}\n${r.busybox.name}:${r.busybox.tag} ${r.busybox.digest}\n`);
        return;
      }
      if (!name) throw new Error('give the image NAME[:TAG] to build (or --lab)');
      const { repository, tag } = parseImageName(name);
      const env = o.env;
      const base = o.base ? parseImageName(o.base) : undefined;
      const built = await buildImage({
        ...(base ? { base: { name: base.repository, tag: base.tag, ...(o.baseStore ? { store: o.baseStore } : {}) } } : {}),
        store: o.store,
        name: repository,
        tag,
        files: (o.file ?? []).map(parseFileSpec),
        dirs: (o.dir ?? []).map(parseDirSpec),
        symlinks: (o.link ?? []).map((s) => {
          const d = parseDirSpec(s);
          return { to: d.from, target: d.to };
        }),
        config: {
          ...(o.entrypoint ? { entrypoint: parseWords(o.entrypoint) } : {}),
          ...(o.cmd ? { cmd: parseWords(o.cmd) } : {}),
          ...(env ? { env } : {}),
          ...(o.workdir ? { workingDir: o.workdir } : {}),
          ...(o.user ? { user: o.user } : {}),
        },
        signal,
      });
      out(`${repository}:${tag} ${built.manifest.digest}\n`);
    });

  image
    .command('ls')
    .description('list the images in a store (or served by a registry)')
    .option('--store <dir>', 'image store (OCI layout directory)', DEFAULT_IMAGE_STORE)
    .option('--registry <host:port|url>', `list what this registry serves instead (e.g. ${DEFAULT_REGISTRY})`)
    .option('-q, --quiet', 'print NAME:TAG only')
    .option('-o, --output <format>', 'table or json', 'table')
    .action(async (o: { store: string; registry?: string; quiet?: boolean; output: string }) => {
      const signal = AbortSignal.timeout(30_000);
      const rows = o.registry
        ? await listRegistryImages(o.registry, { signal })
        : await Promise.all((await listImages(o.store)).map(async (i) => ({ ...i, contentSize: await imageContentSize(o.store, i.digest) })));
      if (o.quiet) return out(rows.map((i) => `${i.name}:${i.tag}\n`).join(''));
      if (o.output === 'json') return out(JSON.stringify(rows, null, 2) + '\n');
      out(tabwrite([['REPOSITORY', 'TAG', 'DIGEST', 'SIZE'], ...rows.map((r) => [r.name, r.tag, r.digest.slice('sha256:'.length, 'sha256:'.length + 13), formatBytes(r.contentSize)])]));
    });

  registerStoreCommands(image);

  image
    .command('serve')
    .description('serve a store read-only over the OCI distribution pull API until interrupted')
    .option('--store <dir>', 'image store (OCI layout directory)', DEFAULT_IMAGE_STORE)
    .option('--address <host:port>', 'listen address (plain HTTP: keep it on loopback or a lab network)', DEFAULT_REGISTRY)
    .option('--lab', `also make sure the lab images are in the store (default store for tests: ${DEFAULT_LAB_IMAGE_DIR})`)
    .option('-v, --verbose', 'log every failed request to stderr')
    .action(async (o: { store: string; address: string; lab?: boolean; verbose?: boolean }) => {
      const at = o.address.lastIndexOf(':');
      const host = at > 0 ? o.address.slice(0, at).replace(/^\[|\]$/g, '') : o.address;
      const port = at > 0 ? Number(o.address.slice(at + 1)) : 5000;
      if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --address "${o.address}": want host:port`);
      if (o.lab) await ensureLabImages(o.store);
      await listImages(o.store); // fail early, with what to do, when the store is missing
      const stop = new AbortController();
      const reg = await startRegistry({ root: o.store, host, port, logger: consoleLogger(o.verbose ?? false), signal: stop.signal });
      out(`serving ${o.store} read-only at ${reg.url} (pull with ${reg.hostPort}/<name>:<tag>); Ctrl-C to stop\n`);
      await new Promise<void>((resolve) => {
        const onSignal = (): void => {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          resolve();
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      });
      stop.abort();
      await reg.close();
    });
}
