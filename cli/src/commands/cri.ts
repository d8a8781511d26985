/**
 * `nodelet cri …`: crictl-comparable diagnostics over CRI v1 (docs/cri.md). The subcommands, flags,
 * table columns, ID truncation and human-readable sizes/ages follow cri-tools' crictl; the CRI work
 * is done by @nodelet/cri-client. Files under ./cri/ keep argument parsing and formatting only.
 */
import type { Command } from 'commander';
import { registerContainers } from './cri/containers.js';
import { registerImages } from './cri/images.js';
import { registerPods } from './cri/pods.js';
import { registerStats } from './cri/stats.js';
import { registerStreams } from './cri/streams.js';
import { registerUpdateRun } from './cri/update-run.js';
import { registerEventsMetrics } from './cri/events-metrics.js';
import { registerConfig } from './cri/config-cmd.js';

export function register(program: Command): void {
  const cri = program
    .command('cri')
    .description('inspect and drive the container runtime over CRI, like crictl')
    .option('-r, --runtime-endpoint <endpoint>', 'CRI runtime endpoint (env CONTAINER_RUNTIME_ENDPOINT)')
    .option('-i, --image-endpoint <endpoint>', 'CRI image endpoint (env IMAGE_SERVICE_ENDPOINT; default: the runtime endpoint)')
    .option('-c, --config <file>', 'crictl config file (env CRI_CONFIG_FILE)', undefined)
    .option('-t, --timeout <duration>', 'deadline of each call (default 2s, or `timeout` of the config file)')
    .option('-D, --debug', 'print the endpoint used')
    .enablePositionalOptions()
    .showHelpAfterError();
  registerStats(cri); // version, info, stats, statsp
  registerPods(cri);
  registerContainers(cri);
  registerStreams(cri);
  registerImages(cri);
  registerUpdateRun(cri);
  registerEventsMetrics(cri);
  registerConfig(cri);
}
