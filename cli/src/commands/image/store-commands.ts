/**
 * `nodelet image import|export|inspect|rm`: moving images in and out of an image store and
 * managing it (docs/images.md). Arguments are image references mapped to store names by
 * `storeNameOf` (`docker.io/library/nginx:1` and `nginx:1` are both `nginx:1`); the work is done
 * by @nodelet/oci.
 */
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { DEFAULT_REGISTRY } from '@nodelet/lab-runtime';
import {
  DEFAULT_IMAGE_STORE,
  exportImages,
  exportImagesToFile,
  type ExportFormat,
  importImages,
  inspectImage,
  pullReferenceOf,
  removeImages,
  storeNameOf,
} from '@nodelet/oci';
import { collect, out } from '../cri/context.js';
import { formatBytes } from './args.js';

/** Imports and exports of real images take a while; a stuck one is still stopped. */
const ARCHIVE_TIMEOUT_MS = 60 * 60_000;

export function registerStoreCommands(image: Command): void {
  image
    .command('import')
    .description('import a docker save archive or an OCI image-layout tar (gzip ok) into a store; every digest is verified')
    .argument('<file>', 'the archive (docker save / ctr images export / nodelet image export output; "-" for standard input)')
    .option('--store <dir>', 'image store (OCI layout directory)', DEFAULT_IMAGE_STORE)
    .option('-t, --tag <name:tag>', "name the archive's single image with this instead of its own tags (repeatable)", collect)
    .option('--registry <host:port>', 'registry serving the store, for the pull references printed', DEFAULT_REGISTRY)
    .action(async (file: string, o: { store: string; tag?: string[]; registry: string }) => {
      const imported = await importImages(file === '-' ? '/dev/stdin' : file, { store: o.store, ...(o.tag ? { tags: o.tag } : {}), signal: AbortSignal.timeout(ARCHIVE_TIMEOUT_MS) });
      for (const i of imported) out(`imported ${i.name}:${i.tag} ${i.manifest.digest}, pull it as ${pullReferenceOf(o.registry, i)}\n`);
    });

  image
    .command('export')
    .description('write images of a store to one tar: an OCI image layout (default) or a docker save archive')
    .argument('<images...>', 'NAME[:TAG] of each image')
    .requiredOption('-o, --output <file>', 'archive to write ("-" for standard output)')
    .option('--format <format>', 'oci or docker', 'oci')
    .option('--store <dir>', 'image store (OCI layout directory)', DEFAULT_IMAGE_STORE)
    .action(async (names: string[], o: { output: string; format: string; store: string }) => {
      if (o.format !== 'oci' && o.format !== 'docker') throw new Error(`invalid --format "${o.format}": want oci or docker`);
      const opts = { store: o.store, images: names.map(storeNameOf), format: o.format as ExportFormat, signal: AbortSignal.timeout(ARCHIVE_TIMEOUT_MS) };
      if (o.output === '-') await exportImages(process.stdout, opts);
      else {
        await exportImagesToFile(o.output, opts);
        // Standard output is the archive itself with -o -; to a file, one line says what was written.
        process.stdout.write(`exported ${names.join(', ')} to ${o.output} (${o.format}, ${formatBytes(statSync(o.output).size)})\n`);
      }
    });

  image
    .command('inspect')
    .description('print the manifest and config of images in a store, as a JSON list')
    .argument('<images...>', 'NAME[:TAG] of each image')
    .option('--store <dir>', 'image store (OCI layout directory)', DEFAULT_IMAGE_STORE)
    .action(async (names: string[], o: { store: string }) => {
      const found = [];
      for (const n of names) found.push(await inspectImage(o.store, storeNameOf(n)));
      out(JSON.stringify(found, null, 2) + '\n');
    });

  image
    .command('rm')
    .description('remove tags from a store, then the blobs no remaining image uses')
    .argument('<images...>', 'NAME[:TAG] of each image')
    .option('--store <dir>', 'image store (OCI layout directory)', DEFAULT_IMAGE_STORE)
    .action(async (names: string[], o: { store: string }) => {
      const r = await removeImages(o.store, names.map(storeNameOf), { signal: AbortSignal.timeout(300_000) });
      for (const u of r.untagged) out(`Untagged: ${u.name}:${u.tag}\n`);
      for (const d of r.deleted) out(`Deleted: ${d.digest}\n`);
    });
}
