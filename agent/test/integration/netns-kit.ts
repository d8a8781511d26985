/**
 * What the network-namespace test rigs (pod-routes-netns.ts, proxy-netns.ts) share: a synchronous
 * command runner, and the sweep of namespaces that killed runs left behind.
 */
import { spawnSync } from 'node:child_process';
import { processExists } from '@nodelet/base';

/** Runs a command; its stdout. Throws on a non-zero exit unless `allowFail`. */
export function sh(args: string[], allowFail = false): string {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8' });
  if (r.status !== 0 && !allowFail) throw new Error(`${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/**
 * A run killed before its cleanup (SIGKILL, a timeout, Ctrl-C of a bench) leaves its namespaces,
 * and with them their veths and bridges. Each rig names its namespaces so that `names` captures the
 * PID of the run that made them as group 1: the namespaces of runs whose process is gone are
 * removed here (after killing what still runs in them); a live run's are left alone.
 */
export function sweepDeadRuns(names: RegExp): void {
  for (const line of sh(['ip', 'netns', 'list'], true).split('\n')) {
    const name = line.split(' ')[0] ?? '';
    const m = names.exec(name);
    if (!m || processExists(Number(m[1]))) continue;
    for (const pid of sh(['ip', 'netns', 'pids', name], true).split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        // Already gone between the listing and the kill.
      }
    }
    sh(['ip', 'netns', 'del', name], true);
  }
}
