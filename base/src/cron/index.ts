/**
 * Maintenance on cron schedules (`@nodelet/base/cron`): the server's snapshots and etcd
 * defragmentation, the agent's idle-time image GC. node-cron does the scheduling (in the process's
 * time zone unless one is given); this module is the project's one place that checks a schedule
 * flag and adapts node-cron's messages to the structured log. It is a subpath of its own so that
 * importing `@nodelet/base` never loads node-cron.
 */
import { createRequire } from 'node:module';
import type { ScheduledTask } from 'node-cron';
import { AgentError } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * node-cron, loaded on the first schedule checked or run: a process with no schedule configured
 * (an agent without `imageGCScheduleCron`, a server without snapshots) never pays for it. Its
 * CommonJS build, so that loading stays synchronous; every use here goes through this one copy.
 */
let loaded: typeof import('node-cron').default | undefined;
function cron(): typeof import('node-cron').default {
  loaded ??= (createRequire(import.meta.url)('node-cron') as typeof import('node-cron')).default;
  return loaded;
}

/**
 * Checks a schedule: five fields (minute hour day-of-month month day-of-week), each as cron reads
 * it. Returns the error message, or undefined when it is good. `allowSeconds` also accepts
 * node-cron's six-field form (a leading seconds field): for tests only, never for a flag.
 */
export function cronProblem(expr: string, o: { allowSeconds?: boolean } = {}): string | undefined {
  const fields = expr.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== 5 && !(o.allowSeconds && fields.length === 6)) {
    return `"${expr}" has ${fields.length} field${fields.length === 1 ? '' : 's'}; a schedule has 5: minute hour day-of-month month day-of-week, e.g. "0 */12 * * *"`;
  }
  const v = cron().validateDetailed(expr);
  if (!v.valid) return `"${expr}" is not a valid cron schedule: ${v.errors.map((e) => `${e.field}${e.value !== undefined ? ` "${e.value}"` : ''}: ${e.message}`).join('; ')}`;
  return undefined;
}

/** A running schedule. */
export interface CronJobHandle {
  /** When the next tick is due. */
  nextRun(): Date | null;
  /** Stops the schedule and waits for a tick in progress. */
  close(): Promise<void>;
}

/**
 * Runs `tick` on `expr` (checked by {@link cronProblem}; `flag` names it in the error) until
 * closed. A tick never overlaps the previous one; a tick that throws is logged and the schedule goes on.
 */
export function scheduleCron(flag: string, expr: string, tick: () => Promise<void>, o: { log: Logger; name: string; timezone?: string; allowSeconds?: boolean }): CronJobHandle {
  const problem = cronProblem(expr, { allowSeconds: o.allowSeconds });
  if (problem) throw new AgentError('ERR_INVALID_ARGUMENT', `${flag}: ${problem}`);
  let running: Promise<void> | undefined;
  const run = async (): Promise<void> => {
    try {
      await tick();
    } catch (err) {
      o.log.error({ job: o.name, err: err instanceof Error ? err.message : String(err) }, 'Scheduled job failed');
    }
  };
  const task: ScheduledTask = cron().schedule(expr, async () => {
    running = run();
    await running;
  }, { noOverlap: true, name: o.name, logger: cronLogger(o.log, o.name), ...(o.timezone ? { timezone: o.timezone } : {}) });
  return {
    nextRun: () => task.getNextRun(),
    close: async () => {
      await task.destroy();
      await running;
    },
  };
}

/** The tasks node-cron still holds under `name` that are not destroyed (tests: a closed job leaves none). */
export function liveCronTasks(name: string): number {
  return [...cron().getTasks().values()].filter((t) => t.name === name && t.getStatus() !== 'destroyed').length;
}

/** node-cron's own messages (a missed or overlapping tick) into the structured log. */
function cronLogger(log: Logger, job: string): { info(m: string): void; warn(m: string): void; error(m: string | Error, err?: Error): void; debug(m: string | Error, err?: Error): void } {
  const text = (m: string | Error, err?: Error): string => `${m instanceof Error ? m.message : m}${err ? `: ${err.message}` : ''}`;
  return {
    info: (m) => log.info({ job, scheduler: 'node-cron' }, m),
    warn: (m) => log.warn({ job, scheduler: 'node-cron' }, m),
    error: (m, err) => log.error({ job, scheduler: 'node-cron' }, text(m, err)),
    debug: (m, err) => log.debug({ job, scheduler: 'node-cron' }, text(m, err)),
  };
}
