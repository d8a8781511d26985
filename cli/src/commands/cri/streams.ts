/** `nodelet cri logs|exec|attach|port-forward`: the commands that stream. */
import { createServer, type AddressInfo, type Server } from 'node:net';
import type { Command } from 'commander';
import { AgentError, parseDuration } from '@nodelet/base';
import { flagsOf, followCriLog, formatCriLogEntry, openStream, PortForwardSession, readCriLog, type CriClient, type CriLogStream, type StreamFlags } from '@nodelet/cri-client';
import { io, out, withClients } from './context.js';

/** `--since`: an RFC 3339 time or a relative duration (10s, 5m, 1h). */
export function parseSince(v: string | undefined, nowMs = Date.now()): Date | undefined {
  if (!v) return undefined;
  if (/^\d{4}-\d{2}-\d{2}T/.test(v)) {
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid --since "${v}": use RFC 3339 (2024-01-02T15:04:05Z) or a duration (10s, 5m)`);
    return d;
  }
  return new Date(nowMs - parseDuration(v, { bare: 'seconds' }));
}

/**
 * crictl's `--previous`: the kubelet names logs `<attempt>.log`, so the previous instance's file
 * is the same path with `attempt − 1` (it outlives its container until the pod goes).
 */
export function previousLogPath(logPath: string, attempt: number, name: string): string {
  const slash = logPath.lastIndexOf('/') + 1;
  const file = logPath.slice(slash);
  if (attempt === 0 || !file.startsWith(`${attempt}.`)) throw new AgentError('ERR_NOT_FOUND', `previous terminated container "${name}" not found`);
  return `${logPath.slice(0, slash)}${attempt - 1}${file.slice(String(attempt).length)}`;
}

interface LogsOptions {
  follow?: boolean;
  tail: string;
  since?: string;
  timestamps?: boolean;
  limitBytes?: string;
  reopen?: boolean;
  stream?: string;
  previous?: boolean;
}

async function runLogs(cri: CriClient, id: string, o: LogsOptions, signal: AbortSignal): Promise<void> {
  if (o.reopen) await cri.runtime.reopenContainerLog({ containerId: id });
  const st = await cri.runtime.containerStatus({ containerId: id });
  let logPath = st.status?.logPath;
  if (!logPath) throw new AgentError('ERR_FAILED_PRECONDITION', `container "${id}" has no log file (its sandbox has no log_directory)`);
  if (o.previous) logPath = previousLogPath(logPath, st.status?.metadata?.attempt ?? 0, st.status?.metadata?.name ?? id);
  const tail = Number.parseInt(o.tail, 10);
  const stream = (o.stream ?? 'all') as CriLogStream | 'all';
  if (!['stdout', 'stderr', 'all'].includes(stream)) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid --stream "${o.stream}": use stdout, stderr or all`);
  const read = { tail: Number.isNaN(tail) ? undefined : tail, since: parseSince(o.since), stream, signal };
  let lastCheck = 0;
  // crictl stops following once the container is no longer running; ask at most once a second.
  const isFinished = async (): Promise<boolean> => {
    if (Date.now() - lastCheck < 1000) return false;
    lastCheck = Date.now();
    const s = await cri.runtime.containerStatus({ containerId: id }, { signal }).catch(() => undefined); // status unknown this time: checked again in a second
    return s?.status?.state !== 'CONTAINER_RUNNING';
  };
  let budget = o.limitBytes ? Number.parseInt(o.limitBytes, 10) : Infinity;
  const entries = o.follow ? followCriLog(logPath, { ...read, isFinished }) : readCriLog(logPath, read);
  for await (const e of entries) {
    let text = formatCriLogEntry(e, { timestamps: o.timestamps });
    if (Buffer.byteLength(text) > budget) text = Buffer.from(text).subarray(0, budget).toString();
    (e.stream === 'stderr' ? io.stderr : io.stdout).write(text);
    budget -= Buffer.byteLength(text);
    if (budget <= 0) return;
  }
}

/** Aborts on the first SIGINT/SIGTERM (a CLI is the composition root of its process). */
function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const onSig = (): void => ac.abort();
  process.once('SIGINT', onSig);
  process.once('SIGTERM', onSig);
  return { signal: ac.signal, dispose: () => (process.off('SIGINT', onSig), process.off('SIGTERM', onSig)) };
}

/**
 * Wires the terminal to an exec/attach session (SPDY; the end of our stdin half-closes the
 * process's stdin, as crictl does); restores the terminal afterwards.
 */
async function interactive(url: string, flags: StreamFlags): Promise<number> {
  const rawTty = Boolean(flags.tty && flags.stdin && process.stdin.isTTY);
  const size = (): { width: number; height: number } | undefined =>
    process.stdout.isTTY && flags.tty ? { width: process.stdout.columns, height: process.stdout.rows } : undefined;
  if (rawTty) process.stdin.setRawMode(true);
  const intr = flags.tty ? undefined : interruptSignal(); // with a tty, ^C goes to the process
  try {
    const session = await openStream(url, { stdin: flags.stdin ? process.stdin : undefined, stdout: io.stdout, stderr: io.stderr, size: size(), signal: intr?.signal }, flags);
    const onResize = (): void => {
      const s = size();
      if (s) session.resize(s);
    };
    process.stdout.on('resize', onResize);
    try {
      const r = await session.done;
      return r.exitCode;
    } finally {
      process.stdout.off('resize', onResize);
    }
  } finally {
    intr?.dispose();
    if (rawTty) process.stdin.setRawMode(false);
    if (flags.stdin) process.stdin.pause();
  }
}

export function registerStreams(cri: Command): void {
  cri
    .command('logs')
    .description("print a container's logs (read from its CRI log file on this host)")
    .argument('<container-id>')
    .option('-f, --follow', 'keep printing new lines until the container stops')
    .option('--tail <n>', 'only the last n lines (-1: all)', '-1')
    .option('--since <time>', 'only lines since an RFC 3339 time or a duration ago (10s, 5m)')
    .option('-t, --timestamps', 'prefix each line with its timestamp')
    .option('--limit-bytes <n>', 'stop after n bytes')
    .option('-r, --reopen', 'ask the runtime to reopen the log file first')
    .option('-s, --stream <stream>', 'stdout, stderr or all', 'all')
    .option('-p, --previous', "the previous instance's log (the kubelet layout: <attempt-1>.log)")
    .action(async (id: string, o: LogsOptions, cmd: Command) => {
      const intr = interruptSignal();
      try {
        await withClients(cmd, ({ runtime }) => runLogs(runtime, id, o, intr.signal));
      } catch (err) {
        if (!intr.signal.aborted) throw err;
      } finally {
        intr.dispose();
      }
    });

  cri
    .command('exec')
    .description('run a command in a running container')
    .argument('<container-id>')
    .argument('<command...>')
    .option('-s, --sync', 'run synchronously (ExecSync) and print the output when done')
    .option('--timeout <seconds>', 'with --sync: kill the command after this many seconds (0: no limit)', '0')
    .option('-t, --tty', 'allocate a terminal')
    .option('-i, --interactive', 'keep stdin open and send it to the command')
    .passThroughOptions()
    .action(async (id: string, argv: string[], o: { sync?: boolean; timeout: string; tty?: boolean; interactive?: boolean }, cmd: Command) => {
      await withClients(cmd, async ({ runtime, endpoints }) => {
        if (o.sync) {
          const secs = Number.parseInt(o.timeout, 10) || 0;
          const r = await runtime.runtime.execSync(
            { containerId: id, cmd: argv, timeout: String(secs) },
            { timeoutMs: secs > 0 ? secs * 1000 + endpoints.timeoutMs : 24 * 3_600_000 },
          );
          io.stdout.write(r.stdout);
          io.stderr.write(r.stderr);
          process.exitCode = r.exitCode;
          return;
        }
        const req = { containerId: id, cmd: argv, tty: Boolean(o.tty), stdin: Boolean(o.interactive), stdout: true, stderr: !o.tty };
        const { url } = await runtime.runtime.exec(req);
        process.exitCode = await interactive(url, flagsOf(req));
      });
    });

  cri
    .command('attach')
    .description('attach to the main process of a running container')
    .argument('<container-id>')
    .option('-t, --tty', 'the container was created with a terminal')
    .option('-i, --stdin', 'keep stdin open and send it to the container')
    .action(async (id: string, o: { tty?: boolean; stdin?: boolean }, cmd: Command) => {
      await withClients(cmd, async ({ runtime }) => {
        const req = { containerId: id, tty: Boolean(o.tty), stdin: Boolean(o.stdin), stdout: true, stderr: !o.tty };
        const { url } = await runtime.runtime.attach(req);
        process.exitCode = await interactive(url, flagsOf(req));
      });
    });

  cri
    .command('port-forward')
    .description('forward local ports to ports inside a pod sandbox (until interrupted)')
    .argument('<pod-id>')
    .argument('<ports...>', '[LOCAL_PORT:]REMOTE_PORT')
    .option('--address <ip>', 'local address to listen on', '127.0.0.1')
    .action(async (podId: string, specs: string[], o: { address: string }, cmd: Command) => {
      const pairs = specs.map((s) => {
        const m = /^(?:(\d+):)?(\d+)$/.exec(s);
        if (!m) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid port "${s}": use REMOTE or LOCAL:REMOTE`);
        return { local: Number(m[1] ?? m[2]), remote: Number(m[2]) };
      });
      const intr = interruptSignal();
      await withClients(cmd, async ({ runtime }) => {
        await runtime.runtime.podSandboxStatus({ podSandboxId: podId }); // fail now on an unknown pod
        // One SPDY session for all connections, as crictl: the URL is good for one upgrade.
        const { url } = await runtime.runtime.portForward({ podSandboxId: podId, port: pairs.map((p) => p.remote) });
        const session = await PortForwardSession.dial(url, { signal: intr.signal });
        const servers: Server[] = [];
        try {
          for (const p of pairs) {
            // Half-open: a client that finished sending still gets its answer.
            const server = createServer({ allowHalfOpen: true }, (sock) => {
              sock.on('error', () => undefined);
              session.forward(p.remote, sock, { signal: intr.signal }).catch((err: unknown) => {
                if (!intr.signal.aborted) io.stderr.write(`nodelet: ${(err as Error).message}\n`);
                sock.destroy();
              });
            });
            await new Promise<void>((resolve, reject) => {
              server.once('error', reject);
              server.listen(p.local, o.address, () => resolve());
            });
            servers.push(server);
            out(`Forwarding from ${o.address}:${(server.address() as AddressInfo).port} -> ${p.remote}\n`);
          }
          const ended = await Promise.race([
            new Promise<'interrupted'>((resolve) => intr.signal.addEventListener('abort', () => resolve('interrupted'), { once: true })),
            session.closed.then(() => 'lost' as const),
          ]);
          if (ended === 'lost') throw new AgentError('ERR_UNAVAILABLE', 'lost connection to the runtime\'s streaming server');
        } finally {
          for (const s of servers) s.close();
          session.destroy();
          intr.dispose();
        }
      });
    });
}
