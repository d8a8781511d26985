/**
 * The horizontal pod autoscaler controller (upstream pkg/controller/podautoscaler): every
 * {@link HPA_SYNC_PERIOD_MS} (and on a spec change) it reads each HPA's target through `/scale`,
 * the pods of the scale's selector and their metrics from metrics.k8s.io, takes the largest
 * replica count the metrics propose, stabilizes and rate-limits it by the behavior, writes it
 * through `/scale`, and reports status (current metrics, AbleToScale, ScalingActive,
 * ScalingLimited with upstream's reasons) and SuccessfulRescale / FailedRescale events.
 * Acts as kube-system/horizontal-pod-autoscaler.
 */
import {
  findResourceByKind,
  HORIZONTALPODAUTOSCALERS,
  PODS,
  type Condition,
  type HorizontalPodAutoscaler,
  type HorizontalPodAutoscalerStatus,
  type MetricStatus,
  type Scale,
} from '@nodelet/api';
import { ControllerBase, type ControllerDeps } from '../controller-base.js';
import { keyOf } from '../util/pods.js';
import { emptyHistory, normalizeReplicas, recordScale, rulesOf, type ConditionChange, type ScalingHistory } from './behavior.js';
import { MetricError, proposeReplicas, type Proposal } from './metrics.js';

/** How often every HPA is evaluated (upstream --horizontal-pod-autoscaler-sync-period, 15 s). */
export const HPA_SYNC_PERIOD_MS = 15_000;

type Conditions = Partial<Record<'AbleToScale' | 'ScalingActive' | 'ScalingLimited', ConditionChange>>;

export class HorizontalPodAutoscalerController extends ControllerBase {
  readonly #hpas;
  /** Recommendations and scale events per HPA key: the stabilization windows and rate policies read them. */
  readonly #history = new Map<string, ScalingHistory>();

  constructor(d: ControllerDeps) {
    super(d, { name: 'horizontalpodautoscaling', eventComponent: 'horizontal-pod-autoscaler' });
    this.#hpas = this.watch(HORIZONTALPODAUTOSCALERS, keyOf, ['add']);
    // Not on status writes (its own, every sync): only a spec change is evaluated before the next period.
    this.handle(this.#hpas, {
      onUpdate: (old, cur) => {
        if (old.metadata.generation !== cur.metadata.generation) this.enqueue(keyOf(cur));
      },
      onDelete: (o) => this.#history.delete(keyOf(o)),
    });
    this.every(d.options.hpaSyncPeriodMs ?? HPA_SYNC_PERIOD_MS, () => this.#hpas.list().map(keyOf));
  }

  async reconcile(key: string, signal: AbortSignal): Promise<void> {
    const hpa = this.#hpas.get(key);
    if (!hpa) return;
    const ns = hpa.metadata.namespace!;
    const spec = hpa.spec;
    const min = spec.minReplicas ?? 1;
    const conditions: Conditions = {};
    const ref = spec.scaleTargetRef;
    const r = findResourceByKind(ref.apiVersion ?? '', ref.kind);
    if (!r || !r.subresources?.includes('scale')) {
      const [group] = (ref.apiVersion ?? '').split('/');
      const message = `the HPA controller was unable to get the target's current scale: no matches for kind "${ref.kind}" in group "${ref.apiVersion?.includes('/') ? group : ''}"`;
      await this.event(hpa, 'Warning', 'FailedGetScale', message);
      conditions.AbleToScale = { status: 'False', reason: 'FailedGetScale', message };
      return this.#writeStatus(hpa, conditions, hpa.status?.currentReplicas ?? 0, hpa.status?.desiredReplicas ?? 0, hpa.status?.currentMetrics, false, signal);
    }
    let scale: Scale;
    try {
      scale = await this.client.get<never, Scale>(r as never, ref.name, { namespace: ns, subresource: 'scale', signal });
    } catch (err) {
      const message = `the HPA controller was unable to get the target's current scale: ${(err as Error).message}`;
      await this.event(hpa, 'Warning', 'FailedGetScale', message);
      conditions.AbleToScale = { status: 'False', reason: 'FailedGetScale', message };
      return this.#writeStatus(hpa, conditions, hpa.status?.currentReplicas ?? 0, hpa.status?.desiredReplicas ?? 0, hpa.status?.currentMetrics, false, signal);
    }
    conditions.AbleToScale = { status: 'True', reason: 'SucceededGetScale', message: 'the HPA controller was able to get the target\'s current scale' };
    const current = scale.spec?.replicas ?? 0;
    let desired = current;
    let reason = '';
    let metrics: MetricStatus[] | undefined = hpa.status?.currentMetrics;
    if (current === 0 && min !== 0) {
      conditions.ScalingActive = { status: 'False', reason: 'ScalingDisabled', message: 'scaling is disabled since the replica count of the target is zero' };
      desired = 0;
    } else if (current > spec.maxReplicas) {
      [desired, reason] = [spec.maxReplicas, 'Current number of replicas above Spec.MaxReplicas'];
    } else if (current < min) {
      [desired, reason] = [min, 'Current number of replicas below Spec.MinReplicas'];
    } else {
      const computed = await this.#fromMetrics(hpa, scale, current, signal);
      metrics = computed.metrics;
      if (!computed.proposal) {
        conditions.ScalingActive = computed.failure!;
        return this.#writeStatus(hpa, conditions, current, hpa.status?.desiredReplicas ?? current, metrics, false, signal);
      }
      conditions.ScalingActive = { status: 'True', reason: 'ValidMetricFound', message: `the HPA was able to successfully calculate a replica count from ${computed.proposal.metricName}` };
      const history = this.#history.get(key) ?? emptyHistory();
      this.#history.set(key, history);
      const n = normalizeReplicas({ current, desired: computed.proposal.replicas, min, max: spec.maxReplicas, rules: rulesOf(spec), history, nowMs: this.clock.now() });
      desired = n.replicas;
      conditions.AbleToScale = n.ableToScale;
      conditions.ScalingLimited = n.scalingLimited;
      reason = desired > current ? `${computed.proposal.metricName} above target` : 'All metrics below target';
    }
    const rescale = desired !== current;
    if (rescale) {
      try {
        await this.client.update(r as never, { ...scale, apiVersion: 'autoscaling/v1', kind: 'Scale', spec: { ...scale.spec, replicas: desired } } as never, { namespace: ns, subresource: 'scale', signal });
      } catch (err) {
        const message = `the HPA controller was unable to update the target scale: ${(err as Error).message}`;
        conditions.AbleToScale = { status: 'False', reason: 'FailedUpdateScale', message };
        await this.event(hpa, 'Warning', 'FailedRescale', `New size: ${desired}; reason: ${reason}; error: ${(err as Error).message}`);
        return this.#writeStatus(hpa, conditions, current, hpa.status?.desiredReplicas ?? current, metrics, false, signal);
      }
      conditions.AbleToScale = { status: 'True', reason: 'SucceededRescale', message: `the HPA controller was able to update the target scale to ${desired}` };
      const history = this.#history.get(key) ?? emptyHistory();
      this.#history.set(key, history);
      recordScale(history, rulesOf(spec), current, desired, this.clock.now());
      await this.event(hpa, 'Normal', 'SuccessfulRescale', `New size: ${desired}; reason: ${reason}`);
    }
    return this.#writeStatus(hpa, conditions, current, desired, metrics, rescale, signal);
  }

  /** The largest proposal of the valid metrics; none when every metric failed, or some failed and the rest would scale down (upstream). */
  async #fromMetrics(hpa: HorizontalPodAutoscaler, scale: Scale, current: number, signal: AbortSignal): Promise<{ proposal?: Proposal; failure?: ConditionChange; metrics: MetricStatus[] }> {
    const selector = scale.status?.selector;
    if (!selector) {
      return { metrics: [], failure: { status: 'False', reason: 'InvalidSelector', message: 'the HPA target\'s scale is missing a selector' } };
    }
    const ns = hpa.metadata.namespace!;
    const pods = (await this.client.resource(PODS, ns).listAll({ labelSelector: selector, signal })).items;
    const specs = hpa.spec.metrics ?? [];
    const metrics: MetricStatus[] = [];
    let best: Proposal | undefined;
    let failure: ConditionChange | undefined;
    for (const m of specs) {
      try {
        const p = await proposeReplicas(m, { client: this.client, namespace: ns, selector, currentReplicas: current, pods, nowMs: this.clock.now(), signal, tolerance: this.options.hpaTolerance });
        metrics.push(p.status);
        if (!best || p.replicas > best.replicas) best = p;
      } catch (err) {
        if (!(err instanceof MetricError)) throw err;
        metrics.push({ type: m.type });
        failure ??= { status: 'False', reason: err.reason, message: `the HPA was unable to compute the replica count: ${err.message}` };
        await this.event(hpa, 'Warning', err.reason, err.message);
      }
    }
    if (!best || (failure && best.replicas < current)) return { metrics, failure: failure ?? { status: 'False', reason: 'InvalidMetricSourceType', message: 'the HPA has no metric' } };
    return { proposal: best, metrics };
  }

  async #writeStatus(hpa: HorizontalPodAutoscaler, set: Conditions, current: number, desired: number, metrics: MetricStatus[] | undefined, rescaled: boolean, signal: AbortSignal): Promise<void> {
    const now = new Date(this.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    const old = hpa.status?.conditions ?? [];
    const conditions: Condition[] = [...old.filter((c) => !(c.type in set))];
    for (const [type, c] of Object.entries(set)) {
      const prev = old.find((o) => o.type === type);
      conditions.push({ type, status: c.status, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime! : now, reason: c.reason, message: c.message });
    }
    const order = ['AbleToScale', 'ScalingActive', 'ScalingLimited'];
    conditions.sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
    const status: HorizontalPodAutoscalerStatus = {
      ...(hpa.metadata.generation !== undefined ? { observedGeneration: hpa.metadata.generation } : {}),
      ...(rescaled ? { lastScaleTime: now } : hpa.status?.lastScaleTime ? { lastScaleTime: hpa.status.lastScaleTime } : {}),
      currentReplicas: current,
      desiredReplicas: desired,
      ...(metrics && metrics.length > 0 ? { currentMetrics: metrics } : {}),
      conditions,
    };
    if (JSON.stringify(status) === JSON.stringify(hpa.status)) return;
    await this.client.resource(HORIZONTALPODAUTOSCALERS, hpa.metadata.namespace).updateStatus({ ...hpa, status }, { signal });
  }
}
