// The baseline of bench/scheduler.ts: the scheduler as it was before the incremental snapshot
// and the separate binding cycle (issue 16), taken from git so it runs beside the current one in
// the same benchmark. The scheduler directory is extracted from the commit into a temp dir whose node_modules points at this checkout's, so both schedulers talk to the same API
// client and API server code and differ only in themselves.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * main as it was merged into this change (the scheduler issue 16 measured, with the later dedupe
 * pass: the shared EventRecorder of @nodelet/api). Its scheduler imports nothing outside its own
 * directory but workspace packages, which resolve to this checkout's.
 */
export const BASELINE_REF = 'b3749944d46a3cdc4a35e4de516ff2cba5477e04';

const PATHS = ['control-plane/src/scheduler'];

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
