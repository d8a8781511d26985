/** `nodelet cri pull|images|inspecti|rmi|imagefsinfo`. */
import type { Command } from 'commander';
import { AgentError, parseDuration } from '@nodelet/base';
import type { AuthConfig, CriClient, Image__Output } from '@nodelet/cri-client';
import { io, out, parseOutput, printStructured, withClients } from './context.js';
import { registerInspect } from './inspect.js';
import { loadPodSandboxConfig } from './config-file.js';
import { imagesTable } from './tables.js';
import { humanDuration } from './format.js';

/**
 * PullImage reports nothing until it is done, so on a terminal we show a spinner with the
 * elapsed time on stderr (cleared at the end); elsewhere nothing.
 */
export function startPullProgress(ref: string, stream: NodeJS.WriteStream = process.stderr): () => void {
  if (!stream.isTTY) return () => {};
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  const started = Date.now();
  let i = 0;
  const draw = (): void => {
    const s = Math.floor((Date.now() - started) / 1000);
    stream.write(`\r\x1b[2K${frames[i++ % frames.length]} pulling ${ref} (${s}s)`);
  };
  draw();
  const t = setInterval(draw, 100);
  return () => {
    clearInterval(t);
    stream.write('\r\x1b[2K');
  };
}

function parseAuth(o: { creds?: string; auth?: string; username?: string }): AuthConfig | null {
  if (o.creds) {
    const i = o.creds.indexOf(':');
    if (i < 0) throw new AgentError('ERR_INVALID_ARGUMENT', '--creds must be USERNAME:PASSWORD');
    return { username: o.creds.slice(0, i), password: o.creds.slice(i + 1) };
  }
  if (o.auth) return { auth: o.auth };
  if (o.username) throw new AgentError('ERR_INVALID_ARGUMENT', '-u/--username needs a password: use --creds USERNAME:PASSWORD');
  return null;
}

async function resolveImage(client: CriClient, ref: string): Promise<Image__Output> {
  const st = await client.image.imageStatus({ image: { image: ref } });
  if (!st.image) throw new AgentError('ERR_NOT_FOUND', `no such image "${ref}" present`);
  return st.image;
}

export function registerImages(cri: Command): void {
  cri
    .command('pull')
    .description('pull an image (progress on a terminal)')
    .argument('<image>')
    .option('--creds <user:password>', 'registry credentials')
    .option('--auth <base64>', 'base64 user:password, as in a docker config')
    .option('-u, --username <name>', 'registry user name (with --creds)')
    .option('--pod-config <file>', 'PodSandboxConfig to pull in the context of')
    .option('--pull-timeout <duration>', 'deadline of the pull', '15m')
    .action(async (ref: string, o: { creds?: string; auth?: string; username?: string; podConfig?: string; pullTimeout: string }, cmd: Command) => {
      const auth = parseAuth(o);
      const pullTimeoutMs = parseDuration(o.pullTimeout, { bare: 'seconds' });
      const sandboxConfig = o.podConfig ? await loadPodSandboxConfig(o.podConfig) : null;
      await withClients(
        cmd,
        async ({ image }) => {
          const stop = startPullProgress(ref);
          const started = Date.now();
          try {
            const { imageRef } = await image.image.pullImage({ image: { image: ref }, auth, sandboxConfig });
            stop();
            if (process.stderr.isTTY) io.stderr.write(`pulled ${ref} in ${humanDuration(Date.now() - started).toLowerCase()}\n`);
            out(`Image is up to date for ${imageRef}\n`);
          } finally {
            stop();
          }
        },
        { pullTimeoutMs },
      );
    });

  cri
    .command('images')
    .alias('image')
    .alias('img')
    .description('list images')
    .argument('[repository[:tag]]', 'only images matching this reference')
    .option('-q, --quiet', 'only print image IDs')
    .option('-o, --output <format>', 'json, yaml or table', 'table')
    .option('--digests', 'show digests')
    .option('--no-trunc', 'do not truncate IDs and digests')
    .option('--pinned', 'show whether the image is pinned')
    .option('-v, --verbose', 'show details of each image')
    .action(async (ref: string | undefined, o: { quiet?: boolean; output?: string; digests?: boolean; trunc?: boolean; pinned?: boolean; verbose?: boolean }, cmd: Command) => {
      const format = parseOutput(o.output);
      await withClients(cmd, async ({ image }) => {
        const { images } = await image.image.listImages({ filter: ref ? { image: { image: ref } } : null });
        if (o.quiet) return out(images.map((i) => `${i.id}\n`).join(''));
        if (format !== 'table') return printStructured({ images }, format);
        if (o.verbose) {
          return out(
            images
              .map((i) => `ID: ${i.id}\n${i.repoTags.map((t) => `RepoTags: ${t}\n`).join('')}${i.repoDigests.map((d) => `RepoDigests: ${d}\n`).join('')}Size: ${i.size}\n${i.uid ? `Uid: ${i.uid.value}\n` : ''}${i.username ? `Username: ${i.username}\n` : ''}\n`)
              .join(''),
          );
        }
        out(imagesTable(images, { noTrunc: o.trunc === false, digests: o.digests, pinned: o.pinned }));
      });
    });

  registerInspect(cri, {
    name: 'inspecti',
    description: 'show the status of one or more images',
    argument: '<image...>',
    status: async ({ image }, ref, verbose) => {
      const st = await image.image.imageStatus({ image: { image: ref }, verbose });
      if (!st.image) throw new AgentError('ERR_NOT_FOUND', `no such image "${ref}" present`);
      return { status: st.image, info: st.info };
    },
    row: (img) => imagesTable([img], {}),
  });

  cri
    .command('rmi')
    .description('remove one or more images')
    .argument('[image...]')
    .option('-a, --all', 'remove all images')
    .option('--prune', 'remove all images not used by any container')
    .action(async (refs: string[], o: { all?: boolean; prune?: boolean }, cmd: Command) => {
      await withClients(cmd, async ({ image, runtime }) => {
        let targets: Image__Output[];
        if (o.all || o.prune) {
          targets = (await image.image.listImages({})).images;
          if (o.prune) {
            const used = new Set((await runtime.runtime.listContainers({})).containers.map((c) => c.imageRef));
            targets = targets.filter((i) => !used.has(i.id));
          }
        } else {
          if (!refs.length) throw new AgentError('ERR_INVALID_ARGUMENT', 'give at least one image, or -a/--all or --prune');
          targets = [];
          for (const ref of refs) targets.push(await resolveImage(image, ref));
        }
        for (const img of targets) {
          await image.image.removeImage({ image: { image: img.id } });
          for (const name of img.repoTags.length ? img.repoTags : [img.id]) out(`Deleted: ${name}\n`);
        }
      });
    });

  cri
    .command('imagefsinfo')
    .description('show the filesystem(s) images are stored on')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .action(async (o: { output?: string }, cmd: Command) => {
      const format = parseOutput(o.output, ['json', 'yaml']) as 'json' | 'yaml';
      await withClients(cmd, async ({ image }) => {
        const r = await image.image.imageFsInfo({});
        printStructured({ status: r }, format);
      });
    });
}
