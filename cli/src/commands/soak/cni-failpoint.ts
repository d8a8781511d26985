/**
 * The failpoint CNI plugin of the soak, after containerd's `cni-bridge-fp`: a shell script named
 * `bridge` in a directory the agent searches before the real plugins (`cniPluginDirs`), so the
 * agent's CNI engine runs it as the first plugin of the node chain. It consults a control file on
 * every ADD and then hands the request to the real bridge plugin:
 *
 *   (no control file)   exec the real bridge
 *   crash-before        kill -9 itself before the bridge ran (nothing allocated yet)
 *   crash-after         run the real bridge (veth, IP allocated), then kill -9 itself: the result is lost
 *   slow <s>            sleep <s> seconds, then exec the real bridge
 *   hold <s>            write the marker file, sleep <s>, then exec (the soak kills the agent meanwhile)
 *
 * Every ADD seen while armed is appended to `adds.log` (mode and container ID), which the report counts.
 * DEL, CHECK and VERSION always pass straight through.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export type FailpointMode = { mode: 'crash-before' | 'crash-after' } | { mode: 'slow' | 'hold'; seconds: number };

export interface CniFailpoint {
  /** The directory to put first in the agent's `cniPluginDirs`. */
  readonly dir: string;
  arm(m: FailpointMode): void;
  disarm(): void;
  /** Resolves true once an ADD is held (`hold` mode) or false after `timeoutMs`. */
  waitHeld(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** ADDs that met the armed failpoint so far, by mode. */
  counts(): Record<string, number>;
}

/** Writes the wrapper under `<workDir>/cni-fp`; `realDirs` are where the real `bridge` is looked up. */
export function installCniFailpoint(workDir: string, realDirs: readonly string[]): CniFailpoint {
  const dir = join(workDir, 'cni-fp');
  const control = join(workDir, 'cni-fp.control');
  const marker = join(workDir, 'cni-fp.held');
  const log = join(workDir, 'cni-fp.adds.log');
  mkdirSync(dir, { recursive: true });
  const real = realDirs.map((d) => join(d, 'bridge')).find((p) => existsSync(p));
  if (!real) throw new Error(`no real "bridge" CNI plugin in [${realDirs.join(', ')}]: install containernetworking-plugins`);
  const script = `#!/bin/sh
# nodelet soak failpoint around the real bridge plugin (docs/reliability.md). Only ADD is affected.
real=${sh(real)}
if [ "$CNI_COMMAND" = ADD ] && [ -r ${sh(control)} ]; then
  read -r mode arg < ${sh(control)}
  echo "$mode $CNI_CONTAINERID" >> ${sh(log)}
  case "$mode" in
    crash-before) kill -9 $$ ;;
    crash-after) "$real" > /dev/null 2>&1; kill -9 $$ ;;
    slow) sleep "$arg" ;;
    hold) : > ${sh(marker)}; sleep "$arg" ;;
  esac
fi
exec "$real"
`;
  // Written aside and renamed, so the engine never execs a half-written script.
  writeFileSync(join(dir, 'bridge.tmp'), script, { mode: 0o755 });
  chmodSync(join(dir, 'bridge.tmp'), 0o755);
  renameSync(join(dir, 'bridge.tmp'), join(dir, 'bridge'));
  rmSync(control, { force: true });

  return {
    dir,
    arm(m) {
      rmSync(marker, { force: true });
      writeFileSync(control, 'seconds' in m ? `${m.mode} ${m.seconds}\n` : `${m.mode} 0\n`);
    },
    disarm() {
      rmSync(control, { force: true });
    },
    async waitHeld(timeoutMs, signal) {
      const until = Date.now() + timeoutMs;
      while (Date.now() < until) {
        signal?.throwIfAborted();
        if (existsSync(marker)) return true;
        await new Promise((r) => setTimeout(r, 25));
      }
      return false;
    },
    counts() {
      const out: Record<string, number> = {};
      let text = '';
      try {
        text = readFileSync(log, 'utf8');
      } catch {
        return out; // no ADD met the failpoint yet
      }
      for (const line of text.split('\n')) {
        const mode = line.split(' ')[0];
        if (mode) out[mode] = (out[mode] ?? 0) + 1;
      }
      return out;
    },
  };
}

/** Single-quoted for sh. */
function sh(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}
