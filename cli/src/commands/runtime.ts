/**
 * `nodelet runtime up|down|status`: the lab container runtime of this node (a private
 * containerd, see docs/runtime.md), and `up --print-dropin|--install-dropin` for the distro's
 * containerd in production. The work is done by @nodelet/lab-runtime.
 */
import type { Command } from 'commander';
import {
  assertRoot,
  DEFAULT_CNI_BIN_DIR,
  DEFAULT_CNI_CONF_DIR,
  DEFAULT_LAB_RUNTIME_DIR,
  DEFAULT_REGISTRY,
  importsLine,
  installDropin,
  labRuntimeDown,
  labRuntimeStatus,
  labRuntimeUp,
  renderDropin,
} from '@nodelet/lab-runtime';
import { createCriClient } from '@nodelet/cri-client';
import { parseDuration } from '@nodelet/base';
import { out } from './cri/context.js';

interface Condition {
  type: string;
  status: boolean;
  reason: string;
  message: string;
}

/** CRI Status conditions (RuntimeReady, NetworkReady), as `crictl info` shows them. */
async function runtimeConditions(endpoint: string, signal: AbortSignal): Promise<Condition[]> {
  const cri = createCriClient({ endpoint, timeoutMs: 5_000 });
  try {
    const r = await cri.runtime.status({ verbose: false }, { signal });
    return (r.status?.conditions ?? []).map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
  } finally {
    cri.close();
  }
}

interface UpOptions {
  dir: string;
  registry: string;
  sandboxImage?: string;
  cniBinDir: string;
  cniConfDir: string;
  systemdCgroup?: boolean;
  timeout: string;
  printDropin?: boolean;
  installDropin?: boolean;
  containerdDir: string;
}


export function register(program: Command): void {
  const runtime = program.command('runtime').description('start, stop and inspect the lab container runtime (a private containerd)');

  runtime
    .command('up')
    .description('write the containerd config for this node, start containerd in the background, wait until CRI answers')
    .option('--dir <dir>', 'state directory of the lab containerd (config, root, state, socket, pidfile, log)', DEFAULT_LAB_RUNTIME_DIR)
    .option('--registry <host:port>', 'plain-HTTP registry serving the lab images (nodelet server)', DEFAULT_REGISTRY)
    .option('--sandbox-image <ref>', 'pause image (default <registry>/pause:3.9)')
    .option('--cni-bin-dir <dir>', 'CNI bin_dir (holds nodelet-cni and loopback)', DEFAULT_CNI_BIN_DIR)
    .option('--cni-conf-dir <dir>', 'CNI conf_dir (where the agent writes its conflist)', DEFAULT_CNI_CONF_DIR)
    .option('--systemd-cgroup', 'use runc\'s systemd cgroup driver (only where systemd is PID 1; must match the agent)')
    .option('--timeout <duration>', 'how long to wait for CRI', '30s')
    .option('--print-dropin', 'print the equivalent configuration for the distro containerd instead of starting one')
    .option('--install-dropin', 'install that configuration into the distro containerd\'s directory instead of starting one')
    .option('--containerd-dir <dir>', 'the distro containerd config directory (for --print-dropin/--install-dropin)', '/etc/containerd')
    .action(async (o: UpOptions) => {
      const common = { registry: o.registry, sandboxImage: o.sandboxImage, cniBinDir: o.cniBinDir, cniConfDir: o.cniConfDir };
      const dropin = { ...common, etcDir: o.containerdDir, ...(o.systemdCgroup !== undefined ? { systemdCgroup: o.systemdCgroup } : {}) };
      if (o.printDropin) {
        out(`# ${o.containerdDir}/config.toml must contain (before its first table):\n${importsLine(o.containerdDir)}\n\n`);
        for (const f of renderDropin(dropin)) out(`# ---- ${f.path}\n${f.content}\n`);
        out('# then restart containerd (systemctl restart containerd)\n');
        return;
      }
      if (o.installDropin) {
        assertRoot('nodelet runtime up --install-dropin');
        const r = await installDropin(dropin);
        for (const p of r.written) out(`written   ${p}\n`);
        if (r.written.length === 0) out('nothing changed\n');
        else out('restart containerd to apply: systemctl restart containerd\n');
        return;
      }
      assertRoot('nodelet runtime up');
      const signal = AbortSignal.timeout(parseDuration(o.timeout, { bare: 'seconds' }) + 5_000);
      const r = await labRuntimeUp({ dir: o.dir, ...common, systemdCgroup: o.systemdCgroup ?? false, readyTimeoutMs: parseDuration(o.timeout, { bare: 'seconds' }), signal });
      out(`${r.alreadyRunning ? 'already running' : 'started'}: containerd ${r.version.runtimeVersion} (pid ${r.pid}), CRI ${r.version.runtimeApiVersion}\n`);
      out(`endpoint: ${r.endpoint}\nconfig:   ${r.paths.configPath}\nlog:      ${r.paths.logFile}\n`);
      out(`use it:   nodelet cri -r ${r.endpoint} info   (or CONTAINER_RUNTIME_ENDPOINT=${r.endpoint})\n`);
    });

  runtime
    .command('down')
    .description('stop the lab containerd (by its pidfile PID) and remove its containers, shims and mounts')
    .option('--dir <dir>', 'state directory of the lab containerd', DEFAULT_LAB_RUNTIME_DIR)
    .option('--grace <duration>', 'wait this long after SIGTERM before SIGKILL', '10s')
    .action(async (o: { dir: string; grace: string }) => {
      assertRoot('nodelet runtime down');
      const r = await labRuntimeDown({ dir: o.dir, graceMs: parseDuration(o.grace, { bare: 'seconds' }) });
      out(r.wasRunning ? `stopped containerd (pid ${r.pid})\n` : 'not running\n');
      if (r.problems.length) {
        for (const p of r.problems) process.stderr.write(`cleanup: ${p}\n`);
        process.exitCode = 1;
      }
    });

  runtime
    .command('status')
    .description('print whether the lab containerd is running and answering CRI (exit 0 when ready, 3 otherwise)')
    .option('--dir <dir>', 'state directory of the lab containerd', DEFAULT_LAB_RUNTIME_DIR)
    .option('-o, --output <format>', 'text or json', 'text')
    .action(async (o: { dir: string; output: string }) => {
      const signal = AbortSignal.timeout(10_000);
      const s = await labRuntimeStatus({ dir: o.dir, signal });
      // Conditions are extra detail: a slow Status call must not turn "up" into a failure.
      const conditions = s.criReady ? await runtimeConditions(s.endpoint, signal).catch((err: Error) => [{ type: 'Status', status: false, reason: 'StatusFailed', message: err.message }]) : [];
      if (o.output === 'json') out(JSON.stringify({ ...s, conditions }, null, 2) + '\n');
      else if (!s.running) out(`down (no running containerd for ${s.configPath}); start it with: nodelet runtime up\n`);
      else if (s.criReady) {
        out(`up: containerd ${s.version!.runtimeVersion} (pid ${s.pid}), CRI ${s.version!.runtimeApiVersion}, endpoint ${s.endpoint}\n`);
        for (const c of conditions) out(`  ${c.type}=${c.status}${c.status ? '' : ` (${[c.reason, c.message].filter(Boolean).join(': ')})`}\n`);
      } else out(`starting or unhealthy: containerd pid ${s.pid} runs but CRI does not answer (${s.error}); see ${s.logFile}\n`);
      process.exitCode = s.running && s.criReady ? 0 : 3;
    });
}
