/**
 * `nodelet audit`: who did what, from the API server's audit log (`--audit-log-path`; the lab
 * writes `<state-dir>/server/audit.log`). `nodelet audit --verb delete --resource pods --name web`
 * answers "who deleted this pod". The reading and filtering is in ./audit/query.ts.
 */
import type { Command } from 'commander';
import { AgentError, parseDuration } from '@nodelet/base';
import { DEFAULT_LAB_STATE_DIR } from '@nodelet/lab-runtime';
import { labPaths } from './lab/cluster.js';
import { auditLogFiles, formatAuditTable, queryAuditLog, type AuditQuery } from './audit/query.js';


interface AuditFlags {
  log: string;
  verb?: string;
  resource?: string;
  name?: string;
  namespace?: string;
  user?: string;
  since?: string;
  stage?: string;
  output: string;
}

/** The query of the flags; `now` is epoch ms (for --since). Throws ERR_INVALID_ARGUMENT on bad values. */
export function auditQueryOf(f: Omit<AuditFlags, 'log' | 'output'>, now: number): AuditQuery {
  const stages = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic', 'all'];
  if (f.stage !== undefined && !stages.includes(f.stage)) throw new AgentError('ERR_INVALID_ARGUMENT', `--stage must be one of ${stages.join(', ')}, got "${f.stage}"`);
  let since: number | undefined;
  if (f.since !== undefined) {
    const ms = parseDuration(f.since, { bare: 'reject' });
    if (ms <= 0) throw new AgentError('ERR_INVALID_ARGUMENT', `--since must be a positive duration like 1h or 30m, got "${f.since}"`);
    since = now - ms;
  }
  return {
    ...(f.verb ? { verb: f.verb } : {}),
    ...(f.resource ? { resource: f.resource } : {}),
    ...(f.name ? { name: f.name } : {}),
    ...(f.namespace ? { namespace: f.namespace } : {}),
    ...(f.user ? { user: f.user } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(f.stage ? { stage: f.stage } : {}),
  };
}

export function register(program: Command): void {
  program
    .command('audit')
    .description('search the API server\'s audit log: who did what to which object, and when (docs/security.md "Audit logging")')
    .option('--log <path>', 'the audit log (--audit-log-path of `nodelet server`); its rotated files are read too', labPaths(DEFAULT_LAB_STATE_DIR).auditLog)
    .option('--verb <verb>', 'get, list, watch, create, update, patch, delete, deletecollection, …')
    .option('--resource <resource>', 'pods, pods/log, deployments.apps, …')
    .option('--name <name>', 'the object\'s name')
    .option('--namespace <ns>', 'the object\'s namespace')
    .option('--user <user>', 'the user, or the user it impersonated')
    .option('--since <duration>', 'only requests received in the last <duration>, e.g. 1h, 30m')
    .option('--stage <stage>', 'RequestReceived, ResponseStarted, ResponseComplete, Panic or all (default: the last stage of each request)')
    .option('-o, --output <format>', 'table or json (the matching events as JSON lines)', 'table')
    .action(async (f: AuditFlags) => {
      if (f.output !== 'table' && f.output !== 'json') throw new AgentError('ERR_INVALID_ARGUMENT', `--output must be table or json, got "${f.output}"`);
      const q = auditQueryOf(f, Date.now());
      const files = auditLogFiles(f.log);
      if (files.length === 0) throw new AgentError('ERR_NOT_FOUND', `no audit log at "${f.log}" (start the server with --audit-policy-file and --audit-log-path, or give --log)`);
      const { events, malformed } = await queryAuditLog(files, q);
      if (malformed > 0) process.stderr.write(`warning: ${malformed} line(s) that are not audit events were skipped\n`);
      if (f.output === 'json') process.stdout.write(events.map((e) => JSON.stringify(e) + '\n').join(''));
      else if (events.length === 0) process.stderr.write('no matching events\n');
      else process.stdout.write(formatAuditTable(events));
    });
}
