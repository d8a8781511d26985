/**
 * bench/console: the web console's first paint of the pods view with many pods, beside an empty
 * cluster (docs/console.md, "Scale").
 *
 *   node --conditions=source --import tsx bench/console.ts [--nodes 100] [--pods 3000] [--runs 3]
 *
 * Each size gets a fresh API server holding the nodes and pods as objects (created through the
 * API, never run: test/e2e/console-scale.ts) and Debian's chromium, headless; a run is a fresh tab
 * navigating to /ui/ signed in, until the pods table shows its first rows (performance.now() in
 * the page, from the navigation's start). Prints the median and range of `--runs` for the empty
 * cluster and for the size, and the load average (the machine is shared: read the figure with it).
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { firstPaintOfPods, startScaleCluster } from '../test/e2e/console-scale.js';

const CHROMIUM = '/usr/bin/chromium';
const { values: args } = parseArgs({ options: { nodes: { type: 'string', default: '100' }, pods: { type: 'string', default: '3000' }, runs: { type: 'string', default: '3' } } });

function count(name: string, v: string, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be a whole number of at least ${min}, got "${v}"`);
  return n;
}

async function measure(nodes: number, pods: number, runs: number): Promise<number[]> {
  const cluster = await startScaleCluster({ nodes, pods });
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  try {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const violations: string[] = [];
      const { page, ms } = await firstPaintOfPods(browser, cluster.server.url, cluster.server.token, violations);
      if (violations.length) throw new Error(`the page reported: ${violations.join('; ')}`);
      times.push(ms);
      await page.context().close();
    }
    return times.sort((a, b) => a - b);
  } finally {
    await browser.close();
    await cluster.close();
  }
}

const line = (label: string, t: number[]): string => `${label.padEnd(28)} median ${Math.round(t[Math.floor(t.length / 2)]!)} ms (${Math.round(t[0]!)}–${Math.round(t.at(-1)!)} ms, ${t.length} runs)`;

if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} missing (apt-get install chromium)`);
const nodes = count('nodes', args.nodes, 0);
const pods = count('pods', args.pods, 0);
const runs = count('runs', args.runs, 1);
const baseline = await measure(0, 0, runs);
const measured = await measure(nodes, pods, runs);
console.log('first paint of the pods view (navigation start → first rows drawn)');
console.log(line('empty cluster', baseline));
console.log(line(`${nodes} nodes, ${pods} pods`, measured));
console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} (${process.platform}, shared machine: read the figures with it)`);
