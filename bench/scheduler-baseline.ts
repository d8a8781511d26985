// The baseline of bench/scheduler.ts: the scheduler as it was before the incremental snapshot
// and the separate binding cycle (issue 16), taken from git so it runs beside the current one in
// the same benchmark. The scheduler and its event recorder are extracted from the commit into a
// temp dir whose node_modules points at this checkout's, so both schedulers talk to the same API
// client and API server code and differ only in themselves.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The landed tree the issue measured: the last commit before this scheduler's rewrite. */
export const BASELINE_REF = '11d47c56fa922b5e31f49a7c075a49a7907cf3c9';

const PATHS = ['control-plane/src/scheduler', 'control-plane/src/controllers/util'];

export interface Baseline {
  /** The baseline's `control-plane/src/scheduler/index.ts`. */
  module: string;
  dispose(): void;
}

/** Extracts the scheduler at `ref`; throws when git cannot (e.g. a shallow clone without that commit). */
export function extractBaseline(repoRoot: string, ref: string = BASELINE_REF): Baseline {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-bench-baseline-'));
  try {
    const tar = execFileSync('git', ['-C', repoRoot, 'archive', '--format=tar', ref, ...PATHS], { maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'pipe'] });
    mkdirSync(dir, { recursive: true });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
    writeFileSync(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
    symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'), 'dir');
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    module: join(dir, 'control-plane/src/scheduler/index.ts'),
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
