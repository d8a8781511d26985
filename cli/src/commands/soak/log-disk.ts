/**
 * The `disk-full` fault's filesystem: the lab's pod log directory (`podLogsDir`, under the state
 * dir) moved onto a small tmpfs of the soak's own, so filling it to 95 % never touches the
 * machine's disk.
 *
 *   prepare: tmpfs on <work>/logfs ─▶ copy what the log dir holds ─▶ mount --move onto the log dir
 *   fill:    one file grown until the filesystem is `percent` full;   release: that file removed
 *   restore: lazy unmount (only when the soak mounted it); `nodelet lab down` unmounts it too
 *
 * Containers that were running before `prepare` keep writing to their old files (the runtime holds
 * them open), so their logs after that point are not visible until they restart.
 */
import { mkdirSync, openSync, closeSync, writeSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { mountsUnder, run } from '@nodelet/lab-runtime';

const FILL_FILE = '.nodelet-soak-fill';

export interface LogDisk {
  readonly dir: string;
  /** Fills the filesystem to `percent` used (no-op when it is fuller already). */
  fill(percent: number): void;
  release(): void;
  usedPercent(): number;
  restore(): Promise<void>;
}

export async function prepareLogDisk(logDir: string, workDir: string, sizeMiB = 64): Promise<LogDisk> {
  mkdirSync(logDir, { recursive: true });
  const already = (await mountsUnder(logDir)).includes(logDir);
  let mounted = false;
  if (!already) {
    const staging = join(workDir, 'logfs');
    mkdirSync(staging, { recursive: true });
    await must(run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0755`, 'nodelet-soak-logs', staging]), 'mount a tmpfs for the pod logs');
    await must(run('cp', ['-a', `${logDir}/.`, staging]), 'copy the pod logs onto the tmpfs');
    await must(run('mount', ['--move', staging, logDir]), 'move the tmpfs onto the pod log dir');
    mounted = true;
  }
  const fillPath = join(logDir, FILL_FILE);
  const usedPercent = (): number => {
    const s = statfsSync(logDir);
    return ((s.blocks - s.bavail) * 100) / s.blocks;
  };
  return {
    dir: logDir,
    fill(percent) {
      const s = statfsSync(logDir);
      const want = Math.floor((s.blocks * percent) / 100) - (s.blocks - s.bavail);
      if (want <= 0) return;
      const fd = openSync(fillPath, 'a');
      try {
        const chunk = Buffer.alloc(1 << 20, 0x2e);
        for (let left = want * s.bsize; left > 0; left -= chunk.length) writeSync(fd, chunk, 0, Math.min(left, chunk.length));
      } finally {
        closeSync(fd);
      }
    },
    release() {
      rmSync(fillPath, { force: true });
    },
    usedPercent,
    async restore() {
      rmSync(fillPath, { force: true });
      if (mounted) await must(run('umount', ['-l', logDir]), 'unmount the pod log tmpfs');
    },
  };
}

async function must(p: Promise<{ code: number; stderr: string }>, what: string): Promise<void> {
  const r = await p;
  if (r.code !== 0) throw new Error(`cannot ${what}: ${r.stderr.trim()}`);
}
