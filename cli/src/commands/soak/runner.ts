/**
 * One soak run against a running lab cluster:
 *
 *   attach (pidfiles, argv, agent config) ─▶ failpoint plugin first in the agent's plugin dirs,
 *   pod logs on a tmpfs ─▶ agent restarted once to pick that up ─▶ namespace + deployments ─▶
 *   baseline (converged, agent RSS/fds) ─▶ for each round: restart snapshot ─▶ churn ─▶ faults
 *   ─▶ converge (bounded) ─▶ invariants ─▶ … ─▶ workload removed ─▶ converge ─▶ final checks
 *   (GC findings given a collection period, agent RSS/fds) ─▶ restore (failpoint out, agent
 *   restarted, tmpfs unmounted, namespace deleted)
 *
 * Stops at the first broken invariant unless `keepGoing` — except leftovers only the agent's
 * garbage collector removes (`awaitsGc`): they fail the run, are reported apart, and the rounds go on.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { delay } from '@nodelet/base';
import { NAMESPACES, PODS, type ApiClient } from '@nodelet/api';
import { LAB_IMAGES } from '@nodelet/oci';
import { containerdPaths } from '@nodelet/lab-runtime';
import { nodeletCommand } from '../lab/processes.js';
import { DEFAULT_LAB_DIR, DEFAULT_RUNTIME_SOCKET, ETC_AGENT_CONFIG } from '../doctor/node-config.js';
import { agentLiveHeap, resourceDrift, settledUsage } from './agent-usage.js';
import { installCniFailpoint } from './cni-failpoint.js';
import { injectFault } from './faults.js';
import { awaitsGc, DOCTOR_GC_IDS, gcFindings, hostLeakFindings, workloadFindings, orphanFindings, Persistence, podFindings, restartFindings, snapshotRestarts, type Finding, type InvariantName } from './invariants.js';
import { attachLab } from './lab-control.js';
import { Ledger } from './ledger.js';
import { prepareLogDisk } from './log-disk.js';
import { observe, type Observation, type ObserveTarget } from './observe.js';
import { generatePlan, type Profile, type Round } from './plan.js';
import { SoakReport } from './report.js';
import { SoakWriter } from './writer.js';
import { SOAK_NAMESPACE } from './workloads.js';

const run = promisify(execFile);

/** A garbage collector runs every minute (kubelet's default); a leftover older than this is a leak. */
const GC_PERIOD_MS = 70_000;

export interface SoakOptions {
  stateDir: string;
  seed: number;
  profile: Profile;
  /** How long a round may take to converge. */
  convergeMs: number;
  /** How long the agent runs without faults before its RSS/fds are read. */
  settleMs: number;
  keepGoing: boolean;
  /** Leave the soak's namespace (and what runs in it) in place at the end. */
  keepWorkload: boolean;
  say(line: string): void;
  replay: string;
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const plan = generatePlan(o.seed, o.profile);
  const report = new SoakReport(o.seed, o.profile.mode, plan.length);
  const work = join(o.stateDir, 'soak');
  mkdirSync(work, { recursive: true });
  const fpDir = join(work, 'cni-fp');
  const lab = await attachLab(o.stateDir, (real) => [fpDir, ...real]);
  const fp = installCniFailpoint(work, lab.realPluginDirs);
  const disk = await prepareLogDisk(lab.podLogsDir, work);
  const say = o.say;
  let api: ApiClient | undefined;
  try {
    say('restarting the agent with the failpoint plugin first in its CNI plugin dirs…');
    await lab.kill('agent', 'SIGTERM');
    await lab.start('agent');
    api = await lab.admin(15_000);
    const ledger = new Ledger();
    const busybox = `${lab.options.registry}/${LAB_IMAGES.busybox.name}:${LAB_IMAGES.busybox.tag}`;
    const writer = new SoakWriter({ api, ledger, busybox, registry: lab.options.registry });
    await writer.setUp();
    const target: ObserveTarget = {
      api, nodeName: lab.options.nodeName, runtimeEndpoint: lab.runtimeEndpoint, runtimeState: containerdPaths(lab.paths.containerd).state,
      agentRoot: lab.paths.agentRoot, podLogsDir: lab.podLogsDir, podCgroupRoot: lab.podCgroupRoot, cniCacheDir: lab.paths.cniCache, ipamDir: lab.paths.ipam, bridge: lab.options.bridge,
    };
    const checker = new Checker(target, report, o, lab.options.nodeName);
    const broke = (fresh: Finding[]): void => {
      for (const x of fresh) say(`  BROKEN ${x.invariant}${gcTag(x)}: ${x.message}  [seed ${o.seed}, after the last round]`);
    };

    say('baseline: converging, then reading the agent\'s RSS, its heap after a full GC and its open fds…');
    await checker.converge(o.convergeMs);
    const admin = api;
    const live = (): ReturnType<typeof agentLiveHeap> => agentLiveHeap(admin, lab.options.nodeName).catch((err: Error) => {
      report.notes.push(`the agent's heap could not be read: ${err.message}`); // the verdict then says it was not measured
      return {};
    });
    report.agentBefore = await settledUsage(() => lab.pid('agent'), o.settleMs, live);

    for (const round of plan) {
      const broken = await runRound(round, { o, report, checker, writer, ledger, lab, fp, disk, api });
      report.roundsRun++;
      if (broken && !o.keepGoing) return report;
    }

    // Leftovers of the last rounds' pods must be collected while those pods still exist (deleting a
    // pod takes all its sandboxes along): give what is pending one GC period, then check.
    const until = checker.pendingUntil();
    if (until !== undefined) {
      say(`waiting ${Math.ceil((until - Date.now()) / 1000)} s for pending dead sandboxes/containers to be collected…`);
      await delay(Math.max(0, until - Date.now()) + 1_000);
      broke(await checker.check(plan.length - 1, await checker.converge(o.convergeMs), undefined));
    }

    say('removing the workload and checking what is left…');
    for (const d of ['web', 'probed', 'crashy', 'burst'] as const) await writer.scale(d, 0);
    const pods = await api.list(PODS, { namespace: SOAK_NAMESPACE, timeoutMs: 15_000 });
    for (const p of pods.items) await api.delete(PODS, p.metadata!.name!, { namespace: SOAK_NAMESPACE }).catch(() => undefined); // already gone; what is left is checked below
    const last = await checker.converge(o.convergeMs);
    const end = Date.now() + 90_000;
    for (let pending = checker.pendingUntil(); pending !== undefined && pending < end; pending = checker.pendingUntil()) {
      await delay(Math.max(0, pending - Date.now()) + 1_000);
      broke(await checker.check(plan.length, await checker.converge(5_000), undefined));
    }
    broke(await checker.check(plan.length, last, undefined));
    report.agentWarm = await settledUsage(() => lab.pid('agent'), o.settleMs, live);
    say('one more churn cycle without faults, then the agent is measured again…');
    await writer.scale('web', o.profile.maxWeb);
    await checker.converge(o.convergeMs);
    await writer.scale('web', 0);
    await checker.converge(o.convergeMs);
    report.agentAfter = await settledUsage(() => lab.pid('agent'), o.settleMs, live);
    const { agentBefore: fresh, agentWarm: warm, agentAfter: after } = report;
    const drift = fresh && warm && after ? resourceDrift({ fresh, warm, after }) : 'the agent was not running to measure';
    broke(report.checked(plan.length, ['agent-resources'], drift ? [{ invariant: 'agent-resources', key: 'end', message: drift }] : []));
    return report;
  } finally {
    report.finishedAt = Date.now();
    report.failpointAdds = fp.counts();
    say('restoring: failpoint out of the agent\'s plugin dirs, pod log tmpfs unmounted…');
    fp.disarm();
    disk.release();
    lab.options.cniPluginDirs = undefined;
    await lab.kill('agent', 'SIGTERM').catch(() => undefined); // the agent may already be down; the restart below reports
    await lab.start('agent').catch((err: Error) => report.notes.push(`agent restart at the end failed: ${err.message}`));
    if (!o.keepWorkload && api) await api.delete(NAMESPACES, SOAK_NAMESPACE).catch(() => undefined); // best-effort cleanup at the end of the soak; its report is already written
    await disk.restore().catch((err: Error) => report.notes.push(err.message));
    api?.close();
    writeFileSync(join(work, `report-${o.seed}.json`), JSON.stringify(report, null, 2));
  }
}

interface RoundDeps {
  o: SoakOptions;
  report: SoakReport;
  checker: Checker;
  writer: SoakWriter;
  ledger: Ledger;
  lab: Awaited<ReturnType<typeof attachLab>>;
  fp: ReturnType<typeof installCniFailpoint>;
  disk: Awaited<ReturnType<typeof prepareLogDisk>>;
  api: ApiClient;
}

/** One round; true when an invariant broke. */
async function runRound(round: Round, d: RoundDeps): Promise<boolean> {
  const { o, report, writer } = d;
  const t0 = Date.now();
  const before = snapshotRestarts(await d.checker.look());
  let acked = 0;
  for (const a of round.churn) {
    if (await writer.apply(a)) acked++;
    if (a.op === 'create-pod' && a.kind === 'badimage') report.fault('missing-image');
  }
  o.say(`round ${round.index + 1}/${report.plannedRounds}: churn ${acked}/${round.churn.length} writes acknowledged; ${before.size} running pods tracked for restarts`);
  const found: Finding[] = [];
  for (const f of round.faults) {
    o.say(`  fault ${f.kind} ${JSON.stringify(f).replace(/^\{"kind":"[^"]+",?/, '{')}`);
    report.fault(f.kind);
    const r = await injectFault(f, { lab: d.lab, fp: d.fp, disk: d.disk, writer, ledger: d.ledger, api: d.api, nodeName: d.lab.options.nodeName, round: round.index, say: o.say });
    for (const n of r.notes) o.say(`    ${n}`);
    for (const uid of r.touched) before.delete(uid);
    found.push(...r.findings);
  }
  const during: InvariantName[] = [];
  for (const f of round.faults) {
    if (f.kind === 'server-kill' || f.kind === 'server-away') during.push('ledger');
    if (f.kind === 'server-away') during.push('restart-while-api-away', 'status-after-api-back');
    if (f.kind === 'containerd-kill' || f.kind === 'containerd-restart') during.push('node-ready-after-runtime');
    if (f.kind === 'containerd-restart') during.push('notready-while-runtime-down');
  }
  const duringFresh = report.checked(round.index, during, found);
  const obs = await d.checker.converge(o.convergeMs);
  const fresh = [...duringFresh, ...(await d.checker.check(round.index, obs, before))];
  d.disk.release();
  report.writes = { acked: d.ledger.acked, unacked: d.ledger.unacked };
  report.created = { ...writer.created };
  const pending = d.checker.gcPending ? `; ${d.checker.gcPending} dead sandbox(es)/container(s) seen, counted if still there after a GC period` : '';
  o.say(`  converged look after ${((Date.now() - t0) / 1000).toFixed(0)} s: ${fresh.length ? `${fresh.length} broken` : 'all invariants hold'}${pending}`);
  for (const x of fresh) o.say(`  BROKEN ${x.invariant}${gcTag(x)}: ${x.message}  [seed ${o.seed}, round ${round.index + 1}]`);
  if (fresh.length && report.failures.length === fresh.length) o.say(`  first broken invariant: ${fresh[0]!.invariant}; replay with: ${o.replay}`);
  // Leftovers for the agent's GC fail the run but do not stop it: the other invariants stay worth checking.
  return fresh.some((x) => !awaitsGc(x));
}

const gcTag = (x: Finding): string => (awaitsGc(x) ? ' (left for the agent\'s GC)' : '');

/** Observes, waits for convergence, and runs the oracles (keeping the GC findings' ages across rounds). */
class Checker {
  readonly #everSeen = new Set<string>();
  readonly #gc = new Persistence(GC_PERIOD_MS);
  readonly #doctorGc = new Persistence(GC_PERIOD_MS);
  #gcCounted: Finding[] = [];
  #gcPending = 0;

  /** GC findings seen but younger than a collection period at the last look. */
  get gcPending(): number {
    return this.#gcPending;
  }

  constructor(
    private readonly target: ObserveTarget,
    private readonly report: SoakReport,
    private readonly o: SoakOptions,
    private readonly nodeName: string,
  ) {}

  async look(): Promise<Observation> {
    const obs = await observe(this.target);
    for (const s of obs.sandboxes) this.#everSeen.add(s.id);
    for (const c of obs.containers) this.#everSeen.add(c.id);
    for (const p of obs.pods) if (p.namespace === SOAK_NAMESPACE) this.report.podsSeen.add(p.uid);
    // GC findings age from the first look that saw them, not from the round's check.
    this.#gcCounted = this.#gc.update(gcFindings(obs), obs.at);
    this.#gcPending = gcFindings(obs).length - this.#gcCounted.length;
    return obs;
  }

  #immediate(obs: Observation): Finding[] {
    return [...workloadFindings(obs), ...podFindings(obs), ...orphanFindings(obs), ...hostLeakFindings(obs, { everSeen: this.#everSeen })];
  }

  /** Looks every 2 s until nothing but GC findings remain, or `ms` passed; returns the last look. */
  async converge(ms: number): Promise<Observation> {
    const until = Date.now() + ms;
    for (;;) {
      let obs: Observation | undefined;
      try {
        obs = await this.look();
      } catch (err) {
        if (Date.now() > until) throw err;
      }
      if (obs && (this.#immediate(obs).length === 0 || Date.now() > until)) return obs;
      await delay(2_000);
    }
  }

  pendingUntil(): number | undefined {
    const a = this.#gc.pendingUntil(Date.now());
    const b = this.#doctorGc.pendingUntil(Date.now());
    return a === undefined ? b : b === undefined ? a : Math.max(a, b);
  }

  async check(round: number, obs: Observation, before: ReturnType<typeof snapshotRestarts> | undefined): Promise<Finding[]> {
    const now = Date.now();
    const found = [...this.#immediate(obs), ...this.#gcCounted, ...(await this.#doctor(now)), ...(await this.#alive())];
    const names: InvariantName[] = ['workload-converged', 'one-ready-sandbox', 'containers', 'stuck-terminating', 'orphans', 'host-leaks', 'dead-sandboxes', 'dead-containers', 'doctor-leaks', 'components-alive'];
    if (before) {
      names.push('no-unprovoked-restarts');
      found.push(...restartFindings(before, obs));
    }
    return this.report.checked(round, names, found);
  }

  /** `nodelet doctor --leaks` as a second, independent oracle (its dead-sandbox/container lines get a GC period too). */
  async #doctor(now: number): Promise<Finding[]> {
    const { cmd, args } = nodeletCommand();
    let stdout: string;
    try {
      ({ stdout } = await run(cmd, [...args, 'doctor', '--leaks', '-o', 'json', ...this.#doctorTarget()], { timeout: 60_000, maxBuffer: 16 << 20 }));
    } catch (err) {
      stdout = (err as { stdout?: string }).stdout ?? ''; // exit code 2 when it found something
    }
    let results: Array<{ id: string; level: string; message: string }>;
    try {
      results = (JSON.parse(stdout) as { results: typeof results }).results;
    } catch {
      return [{ invariant: 'doctor-leaks', key: 'run', message: `nodelet doctor --leaks printed no JSON: ${stdout.slice(0, 200)}` }];
    }
    const config = results.find((r) => r.id === 'doctor.config');
    if (!config?.message.includes(join(this.o.stateDir, 'agent.yaml'))) {
      return [{ invariant: 'doctor-leaks', key: 'config', message: `nodelet doctor did not use the lab's agent config: ${config?.message ?? '(no doctor.config line)'}` }];
    }
    const leaks = results.filter((r) => r.id.startsWith('leaks') && r.level === 'fail').map((r) => ({ invariant: 'doctor-leaks' as const, key: r.message, message: `${r.id}: ${r.message}` }));
    // A veth the cache does not name is usually in a dead sandbox's netns: it goes when that sandbox is collected.
    const gc = leaks.filter((l) => DOCTOR_GC_IDS.some((id) => l.message.startsWith(`${id}:`)));
    return [...leaks.filter((l) => !gc.includes(l)), ...this.#doctorGc.update(gc, now)];
  }

  /**
   * With the default lab and no system containerd, doctor must find the lab by itself (its
   * auto-detection is part of what is checked); otherwise it is pointed at the lab.
   */
  #doctorTarget(): string[] {
    const auto = this.o.stateDir === DEFAULT_LAB_DIR && !existsSync(DEFAULT_RUNTIME_SOCKET) && !existsSync(ETC_AGENT_CONFIG);
    return auto ? [] : ['--lab', this.o.stateDir, '--node-name', this.nodeName];
  }

  async #alive(): Promise<Finding[]> {
    const out: Finding[] = [];
    const lab = await attachLab(this.o.stateDir).catch((err: Error) => err);
    if (lab instanceof Error) return [{ invariant: 'components-alive', key: 'lab', message: lab.message }];
    if ((await lab.pid('containerd')) === undefined) out.push({ invariant: 'components-alive', key: 'containerd', message: 'containerd is not running' });
    return out;
  }
}
