/**
 * `nodelet server`: the composition root of the control plane (API server, store, registry,
 * scheduler, controllers in one process, like `k3s server`). Creates the pino logger, parses
 * flags, handles SIGTERM/SIGINT (stop accepting, end watches, close the store) and exits.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { parseDuration, tryParseIpv4Cidr, type Logger } from '@nodelet/base';
import { createNotifier, untilTerminated } from '@nodelet/systemd';
import type { ApiServerLimits } from './apiserver/limits.js';
import { startControlPlane } from './control-plane.js';
import { parseDatastoreEndpoint, type DatastoreEndpoint } from './storage/endpoint.js';
import { cronProblem } from '@nodelet/base/cron';
import { DEFAULT_SNAPSHOT_RETENTION, DEFAULT_SNAPSHOT_SCHEDULE } from './storage/snapshot/snapshot-schedule.js';
import { inServiceCidr } from './apiserver/kube-dns-service.js';
import { DEFAULT_SERVICE_CIDR } from './apiserver/handlers/service-ip.js';
import { CONTROLLER_NAMES, type ControllerName } from './controllers/index.js';
import { parsePool } from './controllers/servicelb/pool.js';
import { otlpTracesUrl, refuseUnreadOtelVariables } from '@nodelet/api/tracing';
import { loadAdmissionConfiguration, type PodSecurityConfig } from './apiserver/admission/pod-security/config.js';
import { auditLogConfigFromFlags, type AuditFlags, type AuditLogConfig } from './apiserver/audit/audit-log.js';

const USAGE = `Usage: nodelet server [flags]

  --data-dir <dir>               state, PKI and admin.kubeconfig (default /var/lib/nodelet/server)
  --datastore-endpoint <url>     sqlite://<path> (default <data-dir>/state.db), etcd://host:port[,…]
                                 (TLS when an --etcd-* flag is given), https://host:port[,…] or http://…
  --etcd-cafile <file>           CA that signed etcd's serving certificate (default: system roots)
  --etcd-certfile <file>         client certificate for etcd's --client-cert-auth
  --etcd-keyfile <file>          its key
  --encryption-provider-config <file>
                                 EncryptionConfiguration (apiserver.config.k8s.io/v1): encrypt the resources
                                 it names (e.g. secrets) at rest with aesgcm, aescbc or secretbox (docs/security.md)
  --etcd-defrag-schedule-cron <c>
                                 defragment every etcd member, one at a time, on this 5-field cron
                                 schedule, e.g. "0 3 * * 0" (default off; enable it on one server of several)
  --etcd-defrag-interval <d>     the same on a fixed interval, e.g. 24h (default 0 = off; not with the cron flag)
  --snapshot-schedule-cron <c>   snapshots of the store on this 5-field cron schedule, in this server's
                                 time zone (default "0 */12 * * *"; "none" = off); with several servers
                                 the holder of the nodelet-snapshot Lease takes them (docs/backup.md)
  --snapshot-retention <n>       scheduled snapshots to keep (default 5; the last good one is never removed)
  --snapshot-dir <dir>           where snapshots go (default <data-dir>/snapshots)
  --bind-address <ip>            address to listen on (default 0.0.0.0)
  --port <n>                     HTTPS port (default 6443)
  --tls-cert-file <file>         serving certificate (default: generated under <data-dir>/pki)
  --tls-private-key-file <file>  its key
  --kubelet-certificate-authority <file>
                                 CA bundle agents' serving certificates are verified against for
                                 logs/exec (default: the cluster CA, which signs agents' CSRs); needed
                                 for agents serving their own tlsCertFile of another CA
  --registry-address <host:port> read-only OCI registry (default 127.0.0.1:5000; '' disables)
  --registry-root <dir>          image store it serves (default ./build/images)
  --cluster-cidr <cidr>          pod network, split per node by the IPAM controller (default 10.244.0.0/16)
  --service-cluster-ip-range <cidr>  Service ClusterIPs (default 10.96.0.0/16; .1 is the kubernetes Service)
  --cluster-dns <ip>             ClusterIP of the kube-system/kube-dns Service, created at start when
                                 missing (default: the range's 10th address, 10.96.0.10; must be in the range)
  --advertise-address <ip>       where pods reach the API server (default: --bind-address, else the first
                                 non-loopback IPv4); the default/kubernetes endpoints point there
  --service-account-issuer <url> iss of service-account tokens (default https://kubernetes.default.svc.cluster.local)
  --api-audiences <a,b>          audiences accepted in service-account tokens (default: the issuer)
  --disable-controllers          run only the API server (no scheduler, no controllers)
  --controllers <list>           controllers to run, kube-controller-manager style: '*' is every one,
                                 '-name' leaves one out (default '*'; e.g. '*,-cronjob')
  --service-lb-pool <cidr>       IPv4 addresses LoadBalancer Services get, one each, e.g. 192.168.1.240/28
                                 (default: none, they get the ready nodes' InternalIPs; docs/network.md)
  --node-monitor-grace-period <d> silence (no Lease renewal, no status) before a node goes Unknown,
                                 e.g. 50s, 1m, 500ms (default 50s)
  --max-requests-inflight <n>    read-only requests served at once, 0 = no limit (default 400);
                                 watches, logs and exec do not count; past it: 429 + Retry-After
  --max-mutating-requests-inflight <n>
                                 mutating requests served at once, 0 = no limit (default 200)
  --request-timeout <d>          a request (other than watch, log, exec) still running after this
                                 gets 504 Timeout, e.g. 1m0s, 30s; 0 = none (default 1m0s)
  --tracing-endpoint <url>       OTLP/HTTP collector for pod journey spans, e.g. http://127.0.0.1:4318
                                 (spans go to /v1/traces there); without it they are only kept in
                                 memory for \`nodelet trace pod\` (docs/tracing.md)
  --leader-elect[=true|false]    run the scheduler and controller manager only while this server holds
                                 their Leases in kube-system, so several servers on one etcd act one at a
                                 time (default true with an etcd datastore; SQLite serves one server, so
                                 false there); --leader-elect=false for a one-server lab on etcd
  --admission-control-config-file <file>
                                 an AdmissionConfiguration (apiserver.config.k8s.io/v1) whose PodSecurity
                                 plugin entry sets the Pod Security defaults and exemptions (default:
                                 privileged everywhere, nothing exempt; docs/security.md "Pod Security")
  --audit-policy-file <file>     audit.k8s.io/v1 Policy: which requests are logged at which level
                                 (needs --audit-log-path; docs/security.md "Audit logging")
  --audit-log-path <file>        write audit events there, one JSON line each; '-' is standard out
  --audit-log-maxsize <MB>       rotate the audit log before it grows past this (default 0 = 100)
  --audit-log-maxage <days>      delete rotated audit logs older than this (default 0 = keep)
  --audit-log-maxbackup <n>      keep at most this many rotated audit logs (default 0 = all)
  --ui[=true|false]              serve the web console at /ui/ on this port (default true; the page holds
                                 no data: it calls the API with the signed-in user's token; docs/console.md)
  --log-level <level>            pino level (default info)
`;

export async function main(argv: string[]): Promise<void> {
  const all = argv[0] === 'server' ? argv.slice(1) : argv;
  // Go-style boolean flags take `=false`; parseArgs booleans do not, so this one is read here.
  let leaderElect: boolean | undefined;
  let ui = true;
  const args: string[] = [];
  for (const a of all) {
    const m = /^--(leader-elect|ui)(?:=(.*))?$/.exec(a);
    if (!m) {
      args.push(a);
      continue;
    }
    if (m[2] !== undefined && m[2] !== 'true' && m[2] !== 'false') {
      process.stderr.write(`--${m[1]} takes true or false, got "${m[2]}"\n`);
      process.exitCode = 2;
      return;
    }
    if (m[1] === 'ui') ui = m[2] !== 'false';
    else leaderElect = m[2] !== 'false';
  }
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        'data-dir': { type: 'string', default: '/var/lib/nodelet/server' },
        'datastore-endpoint': { type: 'string' },
        'etcd-cafile': { type: 'string' },
        'etcd-certfile': { type: 'string' },
        'etcd-keyfile': { type: 'string' },
        'etcd-defrag-interval': { type: 'string', default: '0' },
        'etcd-defrag-schedule-cron': { type: 'string' },
        'snapshot-schedule-cron': { type: 'string', default: DEFAULT_SNAPSHOT_SCHEDULE },
        'snapshot-retention': { type: 'string', default: String(DEFAULT_SNAPSHOT_RETENTION) },
        'snapshot-dir': { type: 'string' },
        'encryption-provider-config': { type: 'string' },
        'bind-address': { type: 'string', default: '0.0.0.0' },
        port: { type: 'string', default: '6443' },
        'tls-cert-file': { type: 'string' },
        'tls-private-key-file': { type: 'string' },
        'kubelet-certificate-authority': { type: 'string' },
        'registry-address': { type: 'string', default: '127.0.0.1:5000' },
        'registry-root': { type: 'string' },
        'cluster-cidr': { type: 'string', default: '10.244.0.0/16' },
        'cluster-dns': { type: 'string' },
        'disable-controllers': { type: 'boolean', default: false },
        controllers: { type: 'string', default: '*' },
        'service-cluster-ip-range': { type: 'string' },
        'advertise-address': { type: 'string' },
        'service-account-issuer': { type: 'string' },
        'api-audiences': { type: 'string' },
        'node-monitor-grace-period': { type: 'string' },
        'service-lb-pool': { type: 'string' },
        'max-requests-inflight': { type: 'string', default: '400' },
        'max-mutating-requests-inflight': { type: 'string', default: '200' },
        'request-timeout': { type: 'string', default: '1m0s' },
        'tracing-endpoint': { type: 'string' },
        'admission-control-config-file': { type: 'string' },
        'audit-policy-file': { type: 'string' },
        'audit-log-path': { type: 'string' },
        'audit-log-maxsize': { type: 'string' },
        'audit-log-maxage': { type: 'string' },
        'audit-log-maxbackup': { type: 'string' },
        'log-level': { type: 'string', default: 'info' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port must be 0..65535, got "${String(values.port)}"\n`);
    process.exitCode = 2;
    return;
  }
  if (!!values['tls-cert-file'] !== !!values['tls-private-key-file']) {
    process.stderr.write('--tls-cert-file and --tls-private-key-file must be given together\n');
    process.exitCode = 2;
    return;
  }
  const etcdTls = {
    ...(values['etcd-cafile'] ? { caFile: String(values['etcd-cafile']) } : {}),
    ...(values['etcd-certfile'] ? { certFile: String(values['etcd-certfile']) } : {}),
    ...(values['etcd-keyfile'] ? { keyFile: String(values['etcd-keyfile']) } : {}),
  };
  let datastore: DatastoreEndpoint;
  try {
    // Flag combinations are usage errors (exit 2); unreadable files are found when the store opens.
    datastore = parseDatastoreEndpoint(values['datastore-endpoint'] as string | undefined, String(values['data-dir']), etcdTls);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const serviceRange = String(values['service-cluster-ip-range'] ?? DEFAULT_SERVICE_CIDR);
  if (values['cluster-dns'] !== undefined && !inServiceCidr(String(values['cluster-dns']), serviceRange)) {
    process.stderr.write(`--cluster-dns must be an IPv4 address in the service range ${serviceRange}, got "${String(values['cluster-dns'])}"\n`);
    process.exitCode = 2;
    return;
  }
  // The pod network is IPv4 only (docs/network.md): an IPv6 range is refused here, not by the IPAM controller later.
  if (!tryParseIpv4Cidr(String(values['cluster-cidr']))) {
    process.stderr.write(`--cluster-cidr must be an IPv4 CIDR like 10.244.0.0/16 (IPv6 pod networks are not supported), got "${String(values['cluster-cidr'])}"\n`);
    process.exitCode = 2;
    return;
  }
  if (values['service-lb-pool'] !== undefined) {
    try {
      parsePool(String(values['service-lb-pool']));
    } catch (err) {
      process.stderr.write(`--service-lb-pool must be an IPv4 CIDR like 192.168.1.240/28: ${(err as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
  }
  let nodeMonitorGracePeriodMs: number | undefined;
  if (values['node-monitor-grace-period'] !== undefined) {
    nodeMonitorGracePeriodMs = parseDurationMs(String(values['node-monitor-grace-period']));
    if (nodeMonitorGracePeriodMs === undefined || nodeMonitorGracePeriodMs <= 0) {
      process.stderr.write(`--node-monitor-grace-period must be a positive duration like 50s, 1m or 500ms, got "${String(values['node-monitor-grace-period'])}"\n`);
      process.exitCode = 2;
      return;
    }
  }
  const etcdDefragIntervalMs = parseDurationMs(String(values['etcd-defrag-interval']));
  if (etcdDefragIntervalMs === undefined || etcdDefragIntervalMs < 0 || (etcdDefragIntervalMs > 0 && etcdDefragIntervalMs < 60_000)) {
    process.stderr.write(`--etcd-defrag-interval must be 0 (off) or a duration of at least 1m like 24h, got "${String(values['etcd-defrag-interval'])}"\n`);
    process.exitCode = 2;
    return;
  }
  const defragCron = values['etcd-defrag-schedule-cron'] === undefined ? undefined : String(values['etcd-defrag-schedule-cron']).trim();
  const defragCronBad = defragCron === undefined ? undefined : cronProblem(defragCron);
  if (defragCronBad) {
    process.stderr.write(`--etcd-defrag-schedule-cron: ${defragCronBad}\n`);
    process.exitCode = 2;
    return;
  }
  if (defragCron !== undefined && etcdDefragIntervalMs > 0) {
    process.stderr.write('--etcd-defrag-schedule-cron and --etcd-defrag-interval are two schedules for one job: give one\n');
    process.exitCode = 2;
    return;
  }
  const etcdDefrag = defragCron !== undefined ? { cron: defragCron } : etcdDefragIntervalMs > 0 ? { intervalMs: etcdDefragIntervalMs } : undefined;
  if (etcdDefrag && datastore.kind !== 'etcd') {
    process.stderr.write(`--etcd-defrag-${'cron' in etcdDefrag ? 'schedule-cron' : 'interval'} applies only to an etcd datastore (--datastore-endpoint etcd://…)\n`);
    process.exitCode = 2;
    return;
  }
  const snapshotCron = String(values['snapshot-schedule-cron']).trim();
  const cronBad = snapshotCron === 'none' ? undefined : cronProblem(snapshotCron);
  if (cronBad) {
    process.stderr.write(`--snapshot-schedule-cron: ${cronBad}\n`);
    process.exitCode = 2;
    return;
  }
  const snapshotRetention = Number(values['snapshot-retention']);
  if (!Number.isInteger(snapshotRetention) || snapshotRetention < 1) {
    process.stderr.write(`--snapshot-retention must be a whole number of at least 1 (the last good snapshot is never removed), got "${String(values['snapshot-retention'])}"\n`);
    process.exitCode = 2;
    return;
  }
  const snapshots = snapshotCron === 'none' ? undefined : { cron: snapshotCron, retention: snapshotRetention, dir: String(values['snapshot-dir'] ?? join(String(values['data-dir']), 'snapshots')) };
  const limits: Partial<ApiServerLimits> = {};
  for (const [flag, key] of [['max-requests-inflight', 'maxRequestsInflight'], ['max-mutating-requests-inflight', 'maxMutatingRequestsInflight']] as const) {
    const n = Number(values[flag]);
    if (!/^\d+$/.test(String(values[flag])) || !Number.isSafeInteger(n)) {
      process.stderr.write(`--${flag} must be a non-negative integer, got "${String(values[flag])}"\n`);
      process.exitCode = 2;
      return;
    }
    limits[key] = n;
  }
  const selection = parseControllerList(String(values.controllers));
  if (typeof selection === 'string') {
    process.stderr.write(`${selection}\n`);
    process.exitCode = 2;
    return;
  }
  const requestTimeoutMs = parseDurationMs(String(values['request-timeout']));
  if (requestTimeoutMs === undefined) {
    process.stderr.write(`--request-timeout must be a duration like 1m0s, 30s or 0, got "${String(values['request-timeout'])}"\n`);
    process.exitCode = 2;
    return;
  }
  limits.requestTimeoutMs = requestTimeoutMs;
  if (values['tracing-endpoint'] !== undefined) {
    try {
      otlpTracesUrl(String(values['tracing-endpoint']));
      refuseUnreadOtelVariables();
    } catch (err) {
      process.stderr.write(`--tracing-endpoint: ${(err as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
  }
  let podSecurity: PodSecurityConfig | undefined;
  if (values['admission-control-config-file'] !== undefined) {
    try {
      podSecurity = await loadAdmissionConfiguration(String(values['admission-control-config-file']));
    } catch (err) {
      process.stderr.write(`--admission-control-config-file: ${(err as Error).message}\n`);
      process.exitCode = 2;
      return;
    }
  }
  let audit: AuditLogConfig | undefined;
  try {
    audit = auditLogConfigFromFlags(values as AuditFlags);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  const log = pino({ level: String(values['log-level']), base: { component: 'server' } }) as unknown as Logger;
  // A promise nobody awaited failed: the code that produced it has already unwound, so the
  // server's state is as consistent as after any handled error. Log it and keep serving; an
  // exit would drop every client's watches for one lost error.
  process.on('unhandledRejection', (err) => {
    log.error({ err }, 'Unhandled rejection');
  });
  // A synchronous throw that reached the event loop may have stopped a state change half-way,
  // and Node documents the process as unsafe to resume after it. The server is crash-only
  // (the store is the state; systemd restarts us), so log and exit. Request edges are guarded
  // (apiserver/filters/recovery.ts) so that no request can get here.
  process.on('uncaughtException', (err) => {
    log.error({ err }, 'Uncaught exception; exiting');
    process.exit(1);
  });
  const cp = await startControlPlane({
    dataDir: String(values['data-dir']),
    datastoreEndpoint: values['datastore-endpoint'] as string | undefined,
    etcdTls,
    ...(etcdDefrag ? { etcdDefrag } : {}),
    ...(snapshots ? { snapshots } : {}),
    ...(values['encryption-provider-config'] ? { encryptionProviderConfig: String(values['encryption-provider-config']) } : {}),
    bindAddress: String(values['bind-address']),
    port,
    tlsCertFile: values['tls-cert-file'] as string | undefined,
    tlsPrivateKeyFile: values['tls-private-key-file'] as string | undefined,
    kubeletCertificateAuthority: values['kubelet-certificate-authority'] as string | undefined,
    registryAddress: String(values['registry-address']),
    registryRoot: values['registry-root'] as string | undefined,
    clusterCidr: String(values['cluster-cidr']),
    ...(values['cluster-dns'] ? { clusterDns: String(values['cluster-dns']) } : {}),
    controllers: values['disable-controllers'] ? false : (selection.only ?? true),
    ...(selection.disabled.length ? { disableControllers: selection.disabled } : {}),
    ...(nodeMonitorGracePeriodMs !== undefined ? { nodeMonitorGracePeriodMs } : {}),
    ...(values['service-lb-pool'] !== undefined ? { serviceLbPool: String(values['service-lb-pool']) } : {}),
    ...(values['service-cluster-ip-range'] ? { serviceCidr: String(values['service-cluster-ip-range']) } : {}),
    ...(values['advertise-address'] ? { advertiseAddress: String(values['advertise-address']) } : {}),
    ...(values['service-account-issuer'] ? { serviceAccountIssuer: String(values['service-account-issuer']) } : {}),
    ...(values['api-audiences'] ? { apiAudiences: String(values['api-audiences']).split(',').map((a) => a.trim()).filter(Boolean) } : {}),
    limits,
    ...(values['tracing-endpoint'] ? { tracingEndpoint: String(values['tracing-endpoint']) } : {}),
    ...(leaderElect !== undefined ? { leaderElect } : {}),
    staticAdminToken: false,
    ...(podSecurity ? { podSecurity } : {}),
    ...(audit ? { audit } : {}),
    ...(ui ? { console: {} } : {}),
    logger: log,
  });
  log.info({ url: cp.url, kubeconfig: cp.kubeconfigPath, registry: cp.registry?.hostPort, leaderIdentity: cp.leaderIdentity }, 'Server ready');
  // systemd (Type=notify): startControlPlane resolves only once the store is open and the API
  // listens, so READY=1 here means "serving"; pings come from a timer, so a blocked loop stops them.
  const notifier = createNotifier({ logger: log });
  await notifier.ready(`serving ${cp.url}`);
  const stopWatchdog = notifier.startWatchdog();
  await untilTerminated(log);
  stopWatchdog();
  await notifier.stopping();
  await cp.close();
  log.info({}, 'Server stopped');
}

/**
 * `--controllers`: `*` (all), names, and `-name` to leave one out. Returns the explicit list when
 * `*` is absent, the names to drop, or a usage error.
 */
function parseControllerList(s: string): { only?: ControllerName[]; disabled: ControllerName[] } | string {
  const items = s.split(',').map((x) => x.trim()).filter(Boolean);
  const known = new Set<string>(CONTROLLER_NAMES);
  const bad = items.map((x) => x.replace(/^-/, '')).filter((x) => x !== '*' && !known.has(x));
  if (bad.length) return `--controllers: unknown controller(s) ${bad.join(', ')}; known: ${[...known].join(', ')}`;
  const disabled = items.filter((x) => x.startsWith('-')).map((x) => x.slice(1) as ControllerName);
  const named = items.filter((x) => x !== '*' && !x.startsWith('-')) as ControllerName[];
  return items.includes('*') || named.length === 0 ? { disabled } : { only: named.filter((n) => !disabled.includes(n)), disabled: [] };
}

/** A duration flag: Go's form (`1m0s`, `500ms`), or, as these flags have always taken, a number of seconds; undefined when malformed. */
function parseDurationMs(s: string): number | undefined {
  try {
    return parseDuration(s, { bare: 'seconds' });
  } catch {
    // Malformed: the caller names the flag and what it expects.
    return undefined;
  }
}
