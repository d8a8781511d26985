/**
 * v1 ReplicationController and PodTemplate validation and defaults (pkg/apis/core/validation
 * ValidateReplicationController, ValidatePodTemplate; core/v1 SetDefaults_ReplicationController).
 * An RC is judged as a ReplicaSet whose selector is `{matchLabels: <its map>}`, so the messages
 * are the same ones.
 */
import { invalidValue, required, type FieldError } from './field-error.js';
import { validateAlwaysRestartingSpec } from './workloads.js';
import { labelSelectorErrors } from './policy.js';
import { validatePodSpec } from './pod.js';
import { defaultPodSpec } from '../defaults/pod.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

/** Replicas 1; the selector and the object's labels default to the template's labels; the pod spec's defaults. */
export function defaultReplicationController(rc: Obj): void {
  if (!isObj(rc.spec)) rc.spec = {};
  const spec = rc.spec as Obj;
  spec.replicas ??= 1;
  const template = isObj(spec.template) ? spec.template : undefined;
  const labels = template && isObj(template.metadata) && isObj(template.metadata.labels) ? template.metadata.labels : undefined;
  if (labels && Object.keys(labels).length) {
    if (!isObj(spec.selector) || Object.keys(spec.selector).length === 0) spec.selector = { ...labels };
    const meta = (isObj(rc.metadata) ? rc.metadata : (rc.metadata = {})) as Obj;
    if (!isObj(meta.labels) || Object.keys(meta.labels).length === 0) meta.labels = { ...labels };
  }
  if (template && isObj(template.spec)) defaultPodSpec(template.spec);
}

/** The spec of a ReplicationController: a non-empty selector of its template, restartPolicy Always, counts ≥ 0. */
export function validateReplicationController(rc: Obj): FieldError[] {
  const spec = isObj(rc.spec) ? rc.spec : {};
  const selector = isObj(spec.selector) ? spec.selector : {};
  const errs = labelSelectorErrors({ matchLabels: selector }, 'spec.selector').map((e) => ({ ...e, field: e.field.replace('spec.selector.matchLabels', 'spec.selector') }));
  const asReplicaSet = { ...spec, selector: Object.keys(selector).length ? { matchLabels: selector } : undefined };
  errs.push(...validateAlwaysRestartingSpec(asReplicaSet));
  if (spec.minReadySeconds !== undefined && (!Number.isInteger(spec.minReadySeconds) || (spec.minReadySeconds as number) < 0)) {
    errs.push(invalidValue('spec.minReadySeconds', spec.minReadySeconds, 'must be greater than or equal to 0'));
  }
  return errs;
}

/** A PodTemplate's pod spec defaults. */
export function defaultPodTemplate(pt: Obj): void {
  if (isObj(pt.template) && isObj(pt.template.spec)) defaultPodSpec(pt.template.spec);
}

/** A PodTemplate's template: labels and the pod spec. */
export function validatePodTemplate(pt: Obj): FieldError[] {
  if (!isObj(pt.template)) return [required('template')];
  const meta = isObj(pt.template.metadata) ? pt.template.metadata : {};
  return [...labelSelectorErrors({ matchLabels: isObj(meta.labels) ? meta.labels : {} }, 'template.metadata.labels').map((e) => ({ ...e, field: 'template.metadata.labels' })), ...validatePodSpec(pt.template.spec, 'template.spec')];
}
