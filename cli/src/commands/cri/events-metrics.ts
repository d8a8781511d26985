/**
 * `nodelet cri events|metricsp|metricdescs`: the CRI RPCs for evented PLEG and CRI metrics. Older
 * runtimes (containerd 1.6) answer Unimplemented; that is said in one line naming the RPC.
 */
import type { Command } from 'commander';
import { AgentError, hasCode, isAbortError } from '@nodelet/base';
import { stringify as toYaml } from 'yaml';
import { out, parseOutput, printStructured, withClients } from './context.js';
import { pruneDefaults, toJson } from './format.js';

/** Rethrows ERR_UNIMPLEMENTED as a message about the runtime, not about a failed call. */
function unimplemented(rpc: string, endpoint: string, crictl: string): (err: unknown) => never {
  return (err) => {
    if (hasCode(err, 'ERR_UNIMPLEMENTED')) {
      throw new AgentError('ERR_UNIMPLEMENTED', `the runtime at ${endpoint} does not implement ${rpc}, so ${crictl} has nothing to show (containerd 1.6 does not; newer runtimes do)`, { cause: err });
    }
    throw err;
  };
}

export function registerEventsMetrics(cri: Command): void {
  cri
    .command('events')
    .description('stream container events (GetContainerEvents) until interrupted')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .action(async (o: { output: string }, cmd: Command) => {
      const format = parseOutput(o.output, ['json', 'yaml']);
      const stop = new AbortController();
      const onSignal = (): void => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        await withClients(cmd, async ({ runtime, endpoints }) => {
          try {
            for await (const ev of runtime.runtime.getContainerEvents({}, { signal: stop.signal })) {
              // One document per event, so a reader can act on each as it comes.
              out(format === 'json' ? toJson(ev) : `---\n${toYaml(pruneDefaults(ev))}`);
            }
          } catch (err) {
            if (isAbortError(err) && stop.signal.aborted) return;
            unimplemented('GetContainerEvents', endpoints.runtime, 'events')(err);
          }
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });

  cri
    .command('metricsp')
    .description('list pod sandbox metrics (ListPodSandboxMetrics), the CRI replacement of cAdvisor metrics')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .action(async (o: { output: string }, cmd: Command) => {
      const format = parseOutput(o.output, ['json', 'yaml']);
      await withClients(cmd, async ({ runtime, endpoints }) => {
        const r = await runtime.runtime.listPodSandboxMetrics({}).catch(unimplemented('ListPodSandboxMetrics', endpoints.runtime, 'metricsp'));
        printStructured(r, format);
      });
    });

  cri
    .command('metricdescs')
    .description('list the descriptors of the metrics metricsp returns (ListMetricDescriptors)')
    .option('-o, --output <format>', 'json or yaml', 'json')
    .action(async (o: { output: string }, cmd: Command) => {
      const format = parseOutput(o.output, ['json', 'yaml']);
      await withClients(cmd, async ({ runtime, endpoints }) => {
        const r = await runtime.runtime.listMetricDescriptors({}).catch(unimplemented('ListMetricDescriptors', endpoints.runtime, 'metricdescs'));
        printStructured(r, format);
      });
    });
}
