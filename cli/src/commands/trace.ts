/**
 * `nodelet trace pod <ns>/<name>`: a pod's journey from the create request to Ready as a waterfall
 * in the terminal, as an SVG picture (`--svg`) or as the spans (`--json`). docs/tracing.md.
 */
import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AgentError } from '@nodelet/base';
import { ApiClient, loadKubeconfig } from '@nodelet/api';
import { defaultAdminKubeconfig } from './ops/token.js';

/** `ns/name`, or `name` in the default namespace. */
export function parsePodRef(ref: string): { namespace: string; name: string } {
  const parts = ref.split('/');
  if (parts.length > 2 || parts.some((p) => !p)) throw new AgentError('ERR_INVALID_ARGUMENT', `"${ref}" is not <namespace>/<name> or <name>`);
  return parts.length === 2 ? { namespace: parts[0]!, name: parts[1]! } : { namespace: 'default', name: parts[0]! };
}

export function register(program: Command): void {
  const trace = program.command('trace').description("timed traces of a pod's journey (docs/tracing.md)");
  trace
    .command('pod <pod>')
    .description('the steps from the create request to Ready, with their durations: <namespace>/<name> or <name>')
    .option('--kubeconfig <path>', 'admin kubeconfig ($KUBECONFIG when set)', defaultAdminKubeconfig())
    .option('--svg <file>', 'also write the waterfall as an SVG picture')
    .option('--json', 'print the spans as JSON instead of the waterfall')
    .action(async (ref: string, o: { kubeconfig: string; svg?: string; json?: boolean }) => {
      const { namespace, name } = parsePodRef(ref);
      // Loaded here, not with the CLI: the tracing modules bring the OpenTelemetry SDK along.
      const [{ fetchPodTrace }, { renderWaterfallText }, { renderWaterfallSvg }] = await Promise.all([
        import('./trace/fetch.js'), import('./trace/render-text.js'), import('./trace/render-svg.js'),
      ]);
      const client = new ApiClient(await loadKubeconfig(o.kubeconfig));
      try {
        const t = await fetchPodTrace(client, namespace, name);
        for (const w of t.warnings) process.stderr.write(`warning: ${w}\n`);
        if (o.json) process.stdout.write(JSON.stringify({ traceId: t.traceId, spans: t.spans }, null, 2) + '\n');
        else process.stdout.write(renderWaterfallText(t.waterfall, `pod ${namespace}/${name}${t.pod.spec?.nodeName ? ` on ${t.pod.spec.nodeName}` : ''}`, t.timestamps));
        if (o.svg) {
          await writeFile(o.svg, renderWaterfallSvg([{ title: `pod ${namespace}/${name}`, waterfall: t.waterfall }]));
          if (!o.json) process.stdout.write(`wrote ${o.svg}\n`);
        }
      } finally {
        client.close();
      }
    });
}
