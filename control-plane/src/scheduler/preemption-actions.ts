/**
 * Carrying out a preemption (upstream prepareCandidate), off the scheduling cycle: each victim
 * gets the DisruptionTarget condition (reason PreemptionByScheduler), is deleted gracefully and
 * gets a `Preempted` event; pods of lower priority nominated to the same node lose their
 * nomination (the room is the preemptor's now). The preemptor's own nomination is written with
 * its FailedScheduling status (binding-cycle.ts).
 */
import { PODS, rfc3339, type ApiClient, type EventType, type KubeObject, type Pod } from '@nodelet/api';
import { hasCode, type Clock, type Logger } from '@nodelet/base';
import { REASON_PREEMPTION_BY_SCHEDULER, type Candidate } from './preemption.js';

/** Deadline of each call a preemption makes. */
export const PREEMPTION_CALL_TIMEOUT_MS = 30_000;

export interface PreemptionActionDeps {
  client: ApiClient;
  clock: Clock;
  logger: Logger;
  schedulerName: string;
  event(obj: KubeObject, type: EventType, reason: string, message: string): void;
}

/** Evicts the candidate's victims and clears the nominations of `lowerNominated`. Never throws. */
export async function carryOutPreemption(d: PreemptionActionDeps, preemptor: Pod, c: Candidate, lowerNominated: readonly Pod[]): Promise<void> {
  const opts = (): { signal: AbortSignal } => ({ signal: AbortSignal.timeout(PREEMPTION_CALL_TIMEOUT_MS) });
  await Promise.all(
    c.victims.map(async ({ pod: victim }) => {
      const pods = d.client.resource(PODS, victim.metadata.namespace);
      const name = victim.metadata.name ?? '';
      const condition = {
        type: 'DisruptionTarget',
        status: 'True',
        reason: REASON_PREEMPTION_BY_SCHEDULER,
        message: `${d.schedulerName}: preempting to accommodate a higher priority pod`,
        lastTransitionTime: rfc3339(d.clock.now()),
      };
      try {
        await pods.patchStatus(name, { status: { conditions: [condition] } }, { type: 'strategic', ...opts() });
        // Graceful: the pod's own terminationGracePeriodSeconds; only the pod we chose (uid).
        await pods.delete(name, { ...(victim.metadata.uid ? { preconditions: { uid: victim.metadata.uid } } : {}), ...opts() });
      } catch (err) {
        // Gone already: the room is there all the same.
        if (!hasCode(err, 'ERR_NOT_FOUND')) d.logger.warn({ err, victim: `${victim.metadata.namespace}/${name}`, node: c.node }, 'Preempting a victim failed');
        return;
      }
      d.event(victim, 'Normal', 'Preempted', `Preempted by pod ${preemptor.metadata.uid ?? ''} on node ${c.node}`);
    }),
  );
  await Promise.all(
    lowerNominated.map((p) =>
      d.client
        .resource(PODS, p.metadata.namespace)
        .patchStatus(p.metadata.name ?? '', { status: { nominatedNodeName: null } }, { type: 'merge', ...opts() })
        .then(() => undefined)
        .catch((err: unknown) => d.logger.debug({ err, pod: `${p.metadata.namespace}/${p.metadata.name}` }, 'Could not clear nominatedNodeName')),
    ),
  );
}
