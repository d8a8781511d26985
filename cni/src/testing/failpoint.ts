import { appendFile, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The failpoint plugin script (cni/testdata/failpoint-plugin). */
export const FAILPOINT_PLUGIN = fileURLToPath(new URL('../../testdata/failpoint-plugin', import.meta.url));

export type FailpointAction = 'fail-json' | 'fail-plain' | 'garbage' | 'hang' | 'bad-version';

export interface FailpointRule {
  command: 'ADD' | 'DEL' | 'CHECK' | 'VERSION' | 'GC' | 'STATUS';
  /** 1-based call number of that command; omitted = every call. */
  call?: number;
  action: FailpointAction;
  code?: number;
  msg?: string;
  details?: string;
}

export interface FailpointControl {
  versions?: string[];
  rules?: FailpointRule[];
}

export interface FailpointCall {
  command: string;
  call: number;
  env: Record<string, string>;
  stdin: string;
}

/** A temp bin dir holding the failpoint plugin under one or more names, with its control files. */
export interface FailpointBin {
  binDir: string;
  /** Replaces the control file of plugin `name` and resets its counters and log. */
  control(name: string, control: FailpointControl): Promise<void>;
  /** Every recorded invocation of plugin `name`, in order. */
  calls(name: string): Promise<FailpointCall[]>;
  /** Adds a file that is not executable (for the "not executable" case). */
  addNonExecutable(name: string): Promise<void>;
  dispose(): Promise<void>;
}

export async function createFailpointBin(names: readonly string[] = ['fp']): Promise<FailpointBin> {
  const binDir = await mkdtemp(join(tmpdir(), 'nlc-fp-'));
  for (const n of names) await symlink(FAILPOINT_PLUGIN, join(binDir, n));
  return {
    binDir,
    async control(name, control) {
      await writeFile(join(binDir, `${name}.control.json`), JSON.stringify(control));
      await rm(join(binDir, `${name}.state.json`), { force: true });
      await rm(join(binDir, `${name}.log`), { force: true });
    },
    async calls(name) {
      const text = await readFile(join(binDir, `${name}.log`), 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as FailpointCall);
    },
    async addNonExecutable(name) {
      await appendFile(join(binDir, name), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    },
    dispose: () => rm(binDir, { recursive: true, force: true }),
  };
}
