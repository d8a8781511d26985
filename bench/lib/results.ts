/**
 * One shape for every bench's figures: `bench/results/<bench>.json`, and the same figures drawn
 * as `bench/results/<bench>.svg` (one row per figure: the value, its same-run baseline, the
 * target as a line), so the README shows current numbers as pictures beside their targets
 * (docs/performance.md, "Bench results").
 *
 *   writeBenchResults('apiserver', figures, { details, svg: true })
 *   node --conditions=source --import tsx bench/draw.ts      # redraw every results file
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderBenchSvg } from './svg.js';

export const RESULTS_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'results');

/** A target a figure is held to: `<=` for times and sizes, `>=` for rates. */
export interface BenchTarget {
  op: '<=' | '>=';
  value: number;
}

/** One measured number, with what it is compared with in the same run. */
export interface BenchFigure {
  /** What was measured, short: "create p99", "pods bound/s". */
  name: string;
  /** Rows of one group are drawn together under its title ("sqlite", "100 nodes"). */
  group?: string;
  unit: string;
  value: number;
  /** The same measurement's reference from the same run (the floor, the old code, a smaller size). */
  baseline?: { label: string; value: number };
  target?: BenchTarget;
}

export interface BenchResults {
  bench: string;
  date: string;
  commit?: string;
  machine: { cpus: number; model: string; memoryGiB: number; node: string; loadavg: number[] };
  figures: BenchFigure[];
  /** Whatever else the bench wants kept (raw samples, parameters). */
  details?: unknown;
}

/** Whether a figure meets its target; undefined when it has none. */
export function targetMet(f: BenchFigure): boolean | undefined {
  if (!f.target) return undefined;
  return f.target.op === '<=' ? f.value <= f.target.value : f.value >= f.target.value;
}

/** "p99 ≤ 25 ms: met (18.2 ms)": the line a bench prints per target. */
export function targetLine(f: BenchFigure): string | undefined {
  const met = targetMet(f);
  if (met === undefined || !f.target) return undefined;
  const label = f.group ? `${f.group} ${f.name}` : f.name;
  return `${label} ${f.target.op === '<=' ? '≤' : '≥'} ${f.target.value} ${f.unit}: ${met ? 'met' : 'missed'} (${round(f.value)} ${f.unit})`;
}

function round(n: number): number {
  return Math.abs(n) >= 100 ? Math.round(n) : Math.round(n * 100) / 100;
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: RESULTS_DIR, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined; // not a git checkout (a release tarball): the date still identifies the run
  }
}

/** The results document for `figures`, stamped with the machine and commit. */
export function benchResults(bench: string, figures: BenchFigure[], details?: unknown): BenchResults {
  return {
    bench,
    date: new Date().toISOString(),
    commit: gitCommit(),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model.trim() ?? 'unknown',
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
    },
    figures,
    ...(details === undefined ? {} : { details }),
  };
}

export interface WriteOptions {
  details?: unknown;
  /** Also draw the SVG (true: beside the JSON; a string: that path). */
  svg?: boolean | string;
  /** Default bench/results. */
  dir?: string;
}

/**
 * Writes `<dir>/<bench>.json` (and the SVG when asked) and returns the paths. The target lines
 * are returned too, for the bench to print beside its table.
 */
export function writeBenchResults(bench: string, figures: BenchFigure[], o: WriteOptions = {}): { json: string; svg?: string; targetLines: string[] } {
  const dir = o.dir ?? RESULTS_DIR;
  mkdirSync(dir, { recursive: true });
  const doc = benchResults(bench, figures, o.details);
  const json = join(dir, `${bench}.json`);
  writeFileSync(json, `${JSON.stringify(doc, null, 2)}\n`);
  let svg: string | undefined;
  if (o.svg) {
    svg = typeof o.svg === 'string' ? o.svg : join(dir, `${bench}.svg`);
    writeFileSync(svg, renderBenchSvg(doc));
  }
  const targetLines = figures.map(targetLine).filter((l): l is string => l !== undefined);
  return { json, ...(svg ? { svg } : {}), targetLines };
}
