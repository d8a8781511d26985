/**
 * The scenario generator: from a seed and a profile, the whole run as data — every round's churn
 * (API writes) and faults with their parameters — before anything is touched. Pure, so a seed
 * replays the same sequence of actions (timing, and so what the cluster does in between, is the
 * machine's) and `nodelet soak --plan` can print it.
 *
 *   seed ─▶ createRng ─▶ for each round: churn (scale, create/delete pods and Services)
 *                                        faults (a shuffled deck of every kind, dealt in order)
 */
import { createRng, type Rng } from './rng.js';

/** Pod templates of the soak (./workloads.ts builds them). */
export type PodKind = 'init' | 'hostport' | 'badimage';

/** Deployments the soak scales; `burst` is the one faults scale up while they strike. */
export type DeploymentName = 'web' | 'probed' | 'crashy' | 'burst';

export type ChurnAction =
  | { op: 'scale'; deployment: DeploymentName; replicas: number }
  | { op: 'create-pod'; name: string; kind: PodKind; hostPort?: number }
  | { op: 'delete-pod'; name: string }
  | { op: 'create-service'; name: string; target: DeploymentName }
  | { op: 'delete-service'; name: string };

export type Fault =
  /** kill -9 of the agent `killAfterMs` into a burst of pod creation; down for `downMs`. */
  | { kind: 'agent-kill-burst'; burst: number; killAfterMs: number; downMs: number }
  /** kill -9 of the agent while the failpoint plugin holds a CNI ADD (so inside RunPodSandbox). */
  | { kind: 'agent-kill-cni-add'; burst: number; downMs: number }
  /** kill -9 of the agent once the first pod of a burst is Running (status patches in flight). */
  | { kind: 'agent-kill-status'; burst: number; downMs: number }
  /** kill -9 of the server while the ledger writer writes; restarted at once. */
  | { kind: 'server-kill'; killAfterMs: number }
  /** The server stopped for `awayMs`, then started again. */
  | { kind: 'server-away'; awayMs: number }
  /** kill -9 of containerd; started again at once. */
  | { kind: 'containerd-kill' }
  /** containerd stopped (SIGTERM) for `awayMs`, then started again. */
  | { kind: 'containerd-restart'; awayMs: number }
  /** The failpoint plugin kills itself in every ADD for `windowMs` (before or after the real bridge ran). */
  | { kind: 'cni-crash'; burst: number; windowMs: number; when: 'before' | 'after' }
  /** The failpoint plugin sleeps `delayS` in every ADD for `windowMs`. */
  | { kind: 'cni-slow'; burst: number; delayS: number; windowMs: number }
  /** The pod log filesystem filled to `percent` for the rest of the round. */
  | { kind: 'disk-full'; percent: number };

export type FaultKind = Fault['kind'];

export const FAULT_KINDS: readonly FaultKind[] = [
  'agent-kill-burst', 'agent-kill-cni-add', 'agent-kill-status', 'server-kill', 'server-away',
  'containerd-kill', 'containerd-restart', 'cni-crash', 'cni-slow', 'disk-full',
];

export interface Round {
  index: number;
  churn: ChurnAction[];
  faults: Fault[];
}

export type SoakMode = 'smoke' | 'default' | 'long';

export interface Profile {
  mode: SoakMode;
  rounds: number;
  faultsPerRound: number;
  /** How long `server-away` keeps the API server down. */
  serverAwayMs: number;
  /** How long `containerd-restart` keeps the runtime down. */
  runtimeAwayMs: number;
  /** Upper bound of `web` replicas (the issue's 0–30). */
  maxWeb: number;
  /** Pods a burst fault adds. */
  burst: readonly [number, number];
  /** Fault kinds dealt, in deck order before shuffling (smoke keeps to the quick ones). */
  kinds: readonly FaultKind[];
}

/** Sized for this 2-core VM: smoke ≤ 3 min, default ≤ 10 min, long about 20 min (measured: 15 rounds in 9.8 min). */
export function profileFor(mode: SoakMode, rounds?: number): Profile {
  const base = {
    smoke: { rounds: 2, faultsPerRound: 2, serverAwayMs: 8_000, runtimeAwayMs: 12_000, maxWeb: 8, burst: [3, 6] as const, kinds: ['agent-kill-burst', 'cni-crash', 'server-kill', 'containerd-kill'] as FaultKind[] },
    default: { rounds: 6, faultsPerRound: 2, serverAwayMs: 20_000, runtimeAwayMs: 15_000, maxWeb: 30, burst: [5, 12] as const, kinds: [...FAULT_KINDS] },
    long: { rounds: 30, faultsPerRound: 2, serverAwayMs: 60_000, runtimeAwayMs: 20_000, maxWeb: 30, burst: [5, 15] as const, kinds: [...FAULT_KINDS] },
  }[mode];
  return { mode, ...base, rounds: rounds ?? base.rounds };
}

const MAX_BURST = 20;
const HOST_PORT_BASE = 31_000;

/** The run for `seed`: the same seed and profile always give the same rounds. */
export function generatePlan(seed: number, profile: Profile): Round[] {
  const rng = createRng(seed);
  const deck = new Deck(rng, profile.kinds);
  const pods: string[] = [];
  const services: string[] = [];
  const rounds: Round[] = [];
  let hostPorts = 0;
  for (let r = 0; r < profile.rounds; r++) {
    const churn: ChurnAction[] = [];
    // 1. Deployments: web anywhere in 0..maxWeb (never empty in round 0, so the first check has pods).
    churn.push({ op: 'scale', deployment: 'web', replicas: rng.int(r === 0 ? 2 : 0, profile.maxWeb) });
    churn.push({ op: 'scale', deployment: 'probed', replicas: rng.int(0, 3) });
    churn.push({ op: 'scale', deployment: 'crashy', replicas: rng.int(0, 2) });
    churn.push({ op: 'scale', deployment: 'burst', replicas: 0 });
    // 2. Standalone pods: some deleted, some created (one kind each).
    for (let n = rng.int(0, Math.min(2, pods.length)); n > 0; n--) {
      const name = pods.splice(rng.int(0, pods.length - 1), 1)[0]!;
      churn.push({ op: 'delete-pod', name });
    }
    for (let i = 0, n = rng.int(1, 3); i < n; i++) {
      const kind = rng.pick<PodKind>(['init', 'init', 'hostport', 'badimage']);
      const name = `p${r}-${i}-${kind}`;
      churn.push(kind === 'hostport' ? { op: 'create-pod', name, kind, hostPort: HOST_PORT_BASE + hostPorts++ } : { op: 'create-pod', name, kind });
      pods.push(name);
    }
    // 3. Services over the deployments.
    if (services.length > 0 && rng.chance(0.3)) churn.push({ op: 'delete-service', name: services.splice(rng.int(0, services.length - 1), 1)[0]! });
    if (services.length < 3 && rng.chance(0.5)) {
      const name = `svc-${r}`;
      churn.push({ op: 'create-service', name, target: rng.pick<DeploymentName>(['web', 'probed']) });
      services.push(name);
    }
    // 4. Faults, dealt from the deck; bursts stack on the burst deployment.
    const faults: Fault[] = [];
    let burst = 0;
    const more = (): number => {
      burst = Math.min(MAX_BURST, burst + rng.int(profile.burst[0], profile.burst[1]));
      return burst;
    };
    for (const kind of deck.deal(profile.faultsPerRound)) faults.push(faultOf(kind, rng, profile, more));
    rounds.push({ index: r, churn, faults });
  }
  return rounds;
}

function faultOf(kind: FaultKind, rng: Rng, p: Profile, burst: () => number): Fault {
  switch (kind) {
    case 'agent-kill-burst': return { kind, burst: burst(), killAfterMs: rng.int(0, 2_500), downMs: rng.int(0, 3_000) };
    case 'agent-kill-cni-add': return { kind, burst: burst(), downMs: rng.int(0, 2_000) };
    case 'agent-kill-status': return { kind, burst: burst(), downMs: rng.int(0, 2_000) };
    case 'server-kill': return { kind, killAfterMs: rng.int(200, 1_500) };
    case 'server-away': return { kind, awayMs: p.serverAwayMs };
    case 'containerd-kill': return { kind };
    case 'containerd-restart': return { kind, awayMs: p.runtimeAwayMs };
    case 'cni-crash': return { kind, burst: burst(), windowMs: rng.int(3_000, 8_000), when: rng.pick(['before', 'after'] as const) };
    case 'cni-slow': return { kind, burst: burst(), delayS: rng.int(2, 6), windowMs: rng.int(5_000, 10_000) };
    case 'disk-full': return { kind, percent: 95 };
  }
}

/** Every kind once per pass, in a new order each pass; no kind twice in one round when avoidable. */
class Deck {
  #cards: FaultKind[] = [];
  constructor(private readonly rng: Rng, private readonly kinds: readonly FaultKind[]) {}

  deal(n: number): FaultKind[] {
    const hand: FaultKind[] = [];
    while (hand.length < n) {
      if (this.#cards.length === 0) this.#cards = this.rng.shuffle(this.kinds);
      const i = this.#cards.findIndex((k) => !hand.includes(k));
      hand.push(this.#cards.splice(i < 0 ? 0 : i, 1)[0]!);
    }
    return hand;
  }
}

/** One line per action, for `--plan` and the report. */
export function describePlan(rounds: readonly Round[]): string {
  const churn = (a: ChurnAction): string => {
    switch (a.op) {
      case 'scale': return `scale ${a.deployment}=${a.replicas}`;
      case 'create-pod': return `+pod ${a.name}${a.hostPort ? `:${a.hostPort}` : ''}`;
      case 'delete-pod': return `-pod ${a.name}`;
      case 'create-service': return `+svc ${a.name}→${a.target}`;
      case 'delete-service': return `-svc ${a.name}`;
    }
  };
  return rounds
    .map((r) => `round ${r.index}: ${r.churn.map(churn).join(', ')}\n  faults: ${r.faults.map((f) => JSON.stringify(f)).join(' ')}`)
    .join('\n');
}
