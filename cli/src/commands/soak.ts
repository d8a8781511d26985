/**
 * `nodelet soak`: a bounded, seeded chaos run against a running lab cluster (what `make soak` runs
 * between `make up` and `make down`). The work is in ./soak/; this file parses flags and prints.
 * Exit code: 0 every invariant held, 1 one broke (the first is printed with the seed), 2 the run
 * itself failed.
 */
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { parseDuration } from '@nodelet/base';
import { DEFAULT_LAB_STATE_DIR } from '@nodelet/lab-runtime';
import { describePlan, generatePlan, profileFor, type SoakMode } from './soak/plan.js';
import { parseSeed, randomSeed } from './soak/rng.js';
import { runSoak } from './soak/runner.js';

interface SoakFlags {
  stateDir: string;
  seed?: string;
  rounds?: string;
  smoke?: boolean;
  long?: boolean;
  convergeTimeout?: string;
  settle?: string;
  keepGoing?: boolean;
  keepWorkload?: boolean;
  plan?: boolean;
}

const SECONDS: Record<SoakMode, { converge: number; settle: number }> = {
  smoke: { converge: 90, settle: 10 },
  default: { converge: 150, settle: 20 },
  long: { converge: 240, settle: 30 },
};

/** A positive duration flag in ms ("90s", "2m"; a bare number is seconds). */
function duration(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const ms = parseDuration(v, { bare: 'seconds' });
  if (ms <= 0) throw new Error(`${name} must be a positive duration, got ${JSON.stringify(v)}`);
  return ms;
}

function positive(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new Error(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

export function register(program: Command): void {
  program
    .command('soak')
    .description('kill, restart and starve a running lab cluster in seeded rounds and check nothing leaks, duplicates or is lost (docs/reliability.md)')
    .option('--state-dir <dir>', 'the lab cluster (`make up`) to soak', DEFAULT_LAB_STATE_DIR)
    .option('--seed <n>', 'replay this seed (printed at the start of every run)')
    .option('--rounds <n>', 'rounds of churn and faults (default: smoke 2, default 6, long 30)')
    .option('--smoke', 'short run (about 3.5 minutes): two rounds of the quick faults')
    .option('--long', 'long run: 30 rounds, the API server away for 60 s')
    .option('--converge-timeout <duration>', 'how long a round may take to converge (e.g. 150s, 4m)')
    .option('--settle <duration>', 'quiet time before the agent\'s RSS and fds are read (e.g. 20s)')
    .option('--keep-going', 'run every round even after an invariant broke, and report all')
    .option('--keep-workload', 'leave the soak\'s namespace in place at the end')
    .option('--plan', 'print the rounds the seed gives and exit (touches nothing)')
    .action(async (f: SoakFlags) => {
      if (f.smoke && f.long) throw new Error('--smoke and --long exclude each other');
      const mode: SoakMode = f.smoke ? 'smoke' : f.long ? 'long' : 'default';
      const seed = f.seed !== undefined ? parseSeed(f.seed) : randomSeed();
      const profile = profileFor(mode, positive('--rounds', f.rounds));
      const replay = ['nodelet soak', `--seed ${seed}`, mode !== 'default' ? `--${mode}` : '', f.rounds ? `--rounds ${profile.rounds}` : '', f.stateDir !== DEFAULT_LAB_STATE_DIR ? `--state-dir ${f.stateDir}` : ''].filter(Boolean).join(' ');
      process.stdout.write(`nodelet soak: seed ${seed}, ${mode}, ${profile.rounds} rounds (replay: ${replay})\n`);
      if (f.plan) {
        process.stdout.write(describePlan(generatePlan(seed, profile)) + '\n');
        return;
      }
      if (process.getuid?.() !== 0) throw new Error('nodelet soak kills and restarts the lab\'s processes and mounts a tmpfs: run it as root');
      const report = await runSoak({
        stateDir: resolve(f.stateDir),
        seed,
        profile,
        convergeMs: duration('--converge-timeout', f.convergeTimeout) ?? SECONDS[mode].converge * 1000,
        settleMs: duration('--settle', f.settle) ?? SECONDS[mode].settle * 1000,
        keepGoing: !!f.keepGoing,
        keepWorkload: !!f.keepWorkload,
        replay,
        say: (l) => process.stdout.write(`${l}\n`),
      });
      process.stdout.write(`\n${report.format(replay)}\n`);
      process.exitCode = report.failures.length ? 1 : 0;
    });
}
