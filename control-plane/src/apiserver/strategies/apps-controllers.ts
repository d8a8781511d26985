/**
 * Strategies of DaemonSets, StatefulSets and ControllerRevisions (pkg/registry/apps/*): defaults,
 * the DaemonSet's template generation (annotation `deprecated.daemonset.template.generation`,
 * bumped when the template changes), validation and what an update may change.
 */
import {
  defaultDaemonSetSpec,
  defaultPodSpec,
  defaultStatefulSetSpec,
  forbiddenField,
  invalidValue,
  notSupported,
  validateAlwaysRestartingSpec,
  validatePersistentVolumeClaimSpec,
  type FieldError,
} from '@nodelet/api';
import { cloneJson, isPlainObject, jsonEqual, type ApiObject, type Json } from '../object.js';
import type { Strategy } from '../resource.js';

export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

const specOf = (o: ApiObject | undefined): Json => (isPlainObject(o?.spec) ? (o!.spec as Json) : {});

function selectorImmutable(obj: ApiObject, old: ApiObject | undefined): FieldError[] {
  if (!old || jsonEqual(specOf(obj).selector ?? null, specOf(old).selector ?? null)) return [];
  return [invalidValue('spec.selector', specOf(obj).selector, 'field is immutable')];
}

function intOrPercentZero(v: unknown): boolean {
  return v === 0 || v === '0' || v === '0%';
}

/** A template with the pod defaults applied, so a replace that omits defaults is not a change. */
function normalizedTemplate(t: unknown): unknown {
  const copy = cloneJson((t ?? {}) as Json);
  if (isPlainObject(copy.spec)) defaultPodSpec(copy.spec);
  return copy;
}

export const daemonSetStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultDaemonSetSpec(obj.spec);
  },
  prepareForCreate(obj) {
    obj.status = { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 };
    obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [TEMPLATE_GENERATION_ANNOTATION]: '1' };
  },
  prepareForUpdate(obj, old) {
    const oldGen = Number(old.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION] ?? '1') || 1;
    const changed = !jsonEqual(normalizedTemplate(specOf(obj).template), normalizedTemplate(specOf(old).template));
    obj.metadata.annotations = { ...(obj.metadata.annotations ?? {}), [TEMPLATE_GENERATION_ANNOTATION]: String(changed ? oldGen + 1 : oldGen) };
  },
  validate(obj, old) {
    const errs = [...validateAlwaysRestartingSpec(obj.spec), ...selectorImmutable(obj, old)];
    const strategy = (specOf(obj).updateStrategy ?? {}) as Json;
    if (strategy.type !== undefined && strategy.type !== 'RollingUpdate' && strategy.type !== 'OnDelete') {
      errs.push(notSupported('spec.updateStrategy.type', strategy.type, ['OnDelete', 'RollingUpdate']));
    }
    const ru = strategy.rollingUpdate as Json | undefined;
    if (strategy.type === 'RollingUpdate' && ru && intOrPercentZero(ru.maxUnavailable) && intOrPercentZero(ru.maxSurge)) {
      errs.push(invalidValue('spec.updateStrategy.rollingUpdate.maxUnavailable', ru.maxUnavailable, 'may not be 0 when `maxSurge` is 0'));
    }
    return errs;
  },
};

/** The spec fields a StatefulSet update may change (ValidateStatefulSetUpdate). */
const STATEFULSET_MUTABLE = ['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds'];

export const statefulSetStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultStatefulSetSpec(obj.spec);
  },
  prepareForCreate(obj) {
    obj.status = { replicas: 0, availableReplicas: 0 };
  },
  validate(obj, old) {
    const spec = specOf(obj);
    // Containers mount the claim templates by name: validate the template as the pods will be.
    const withClaims = cloneJson(spec);
    const podSpec = (withClaims.template as Json | undefined)?.spec as Json | undefined;
    if (podSpec && Array.isArray(spec.volumeClaimTemplates)) {
      const names = (spec.volumeClaimTemplates as Json[]).map((t) => (t?.metadata as Json | undefined)?.name).filter((n): n is string => typeof n === 'string');
      const volumes = ((podSpec.volumes ?? []) as Json[]).filter((v) => !names.includes(v?.name as string));
      podSpec.volumes = [...volumes, ...names.map((name) => ({ name, persistentVolumeClaim: { claimName: name } }))];
    }
    const errs = validateAlwaysRestartingSpec(withClaims);
    if (spec.podManagementPolicy !== undefined && !['OrderedReady', 'Parallel'].includes(spec.podManagementPolicy as string)) {
      errs.push(notSupported('spec.podManagementPolicy', spec.podManagementPolicy, ['OrderedReady', 'Parallel']));
    }
    const strategy = (spec.updateStrategy ?? {}) as Json;
    if (strategy.type !== undefined && strategy.type !== 'RollingUpdate' && strategy.type !== 'OnDelete') {
      errs.push(notSupported('spec.updateStrategy.type', strategy.type, ['OnDelete', 'RollingUpdate']));
    }
    const partition = (strategy.rollingUpdate as Json | undefined)?.partition;
    if (partition !== undefined && (!Number.isInteger(partition) || (partition as number) < 0)) {
      errs.push(invalidValue('spec.updateStrategy.rollingUpdate.partition', partition, 'must be greater than or equal to 0'));
    }
    const templates = spec.volumeClaimTemplates;
    if (Array.isArray(templates)) {
      templates.forEach((t: Json, i) => {
        if (!t?.metadata || !(t.metadata as Json).name) errs.push({ type: 'FieldValueRequired', field: `spec.volumeClaimTemplates[${i}].metadata.name`, message: 'Required value: name or generateName is required' });
        errs.push(...validatePersistentVolumeClaimSpec(t?.spec, `spec.volumeClaimTemplates[${i}].spec`));
      });
    }
    if (old) {
      const strip = (s: Json): Json => Object.fromEntries(Object.entries(s).filter(([k]) => !STATEFULSET_MUTABLE.includes(k)));
      if (!jsonEqual(strip(spec), strip(specOf(old)))) {
        errs.push(
          forbiddenField(
            'spec',
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
          ),
        );
      }
    }
    return errs;
  },
};

export const controllerRevisionStrategy: Strategy = {
  validate(obj, old) {
    const errs: FieldError[] = [];
    const rev = obj.revision;
    if (!Number.isInteger(rev) || (rev as number) < 0) errs.push(invalidValue('revision', rev, 'must be greater than or equal to 0'));
    if (old && !jsonEqual(obj.data ?? null, old.data ?? null)) errs.push(invalidValue('data', '<data>', 'field is immutable'));
    return errs;
  },
};
