/**
 * Pod spec validation: the subset of k8s.io/kubernetes/pkg/apis/core/validation that catches the
 * mistakes people make by hand (missing image, duplicate container names, bad ports, bad enums)
 * and everything that becomes a path on the node (volumes and volumeMounts, see volumes.ts).
 */
import { duplicate, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { dns1123LabelProblem } from './names.js';
import { validateVolumeMounts, validateVolumes } from './volumes.js';
import { validateLifecycle } from './lifecycle.js';
import { validatePodScheduling } from './pod-scheduling.js';
import { validateEphemeralFields } from './ephemeral.js';

type Obj = Record<string, unknown>;
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

export function validatePodSpec(spec: unknown, path: string): FieldError[] {
  if (!spec || typeof spec !== 'object') return [required(path)];
  const s = spec as Obj;
  const { names: volumes, errs } = validateVolumes(s.volumes, `${path}.volumes`);
  const names = new Set<string>();
  const graceS = Number.isInteger(s.terminationGracePeriodSeconds) ? (s.terminationGracePeriodSeconds as number) : 30;
  const containers = s.containers;
  if (!Array.isArray(containers) || containers.length === 0) errs.push(required(`${path}.containers`));
  else containers.forEach((c, i) => errs.push(...validateContainer(c, `${path}.containers[${i}]`, names, volumes, graceS)));
  if (s.initContainers !== undefined) {
    if (!Array.isArray(s.initContainers)) errs.push(invalidValue(`${path}.initContainers`, s.initContainers, 'must be a list'));
    else s.initContainers.forEach((c, i) => errs.push(...validateContainer(c, `${path}.initContainers[${i}]`, names, volumes, graceS)));
  }
  if (s.ephemeralContainers !== undefined) {
    const list = s.ephemeralContainers;
    if (!Array.isArray(list)) errs.push(invalidValue(`${path}.ephemeralContainers`, list, 'must be a list'));
    else {
      // Targets are the regular and init containers only; names are unique across all three lists.
      const targets = new Set(names);
      list.forEach((c, i) => errs.push(...validateContainer(c, `${path}.ephemeralContainers[${i}]`, names, volumes, graceS)));
      errs.push(...validateEphemeralFields(list, `${path}.ephemeralContainers`, targets));
    }
  }
  if (s.restartPolicy !== undefined && !RESTART_POLICIES.includes(s.restartPolicy as string)) {
    errs.push(notSupported(`${path}.restartPolicy`, s.restartPolicy, RESTART_POLICIES));
  }
  if (s.dnsPolicy !== undefined && !DNS_POLICIES.includes(s.dnsPolicy as string)) errs.push(notSupported(`${path}.dnsPolicy`, s.dnsPolicy, DNS_POLICIES));
  const grace = s.terminationGracePeriodSeconds;
  if (grace !== undefined && (!Number.isInteger(grace) || (grace as number) < 0)) {
    errs.push(invalidValue(`${path}.terminationGracePeriodSeconds`, grace, 'must be a non-negative integer'));
  }
  if (s.nodeName !== undefined && typeof s.nodeName !== 'string') errs.push(invalidValue(`${path}.nodeName`, s.nodeName, 'must be a string'));
  errs.push(...validatePodScheduling(s, path));
  return errs;
}

function validateContainer(c: unknown, path: string, names: Set<string>, volumes: ReadonlySet<string>, graceS: number): FieldError[] {
  if (!c || typeof c !== 'object') return [invalidValue(path, c, 'must be an object')];
  const ct = c as Obj;
  const errs: FieldError[] = [];
  if (typeof ct.name !== 'string' || ct.name === '') errs.push(required(`${path}.name`));
  else {
    const p = dns1123LabelProblem(ct.name);
    if (p) errs.push(invalidValue(`${path}.name`, ct.name, p));
    if (names.has(ct.name)) errs.push(duplicate(`${path}.name`, ct.name));
    names.add(ct.name);
  }
  if (typeof ct.image !== 'string' || ct.image.trim() === '') errs.push(required(`${path}.image`));
  if (ct.imagePullPolicy !== undefined && !PULL_POLICIES.includes(ct.imagePullPolicy as string)) {
    errs.push(notSupported(`${path}.imagePullPolicy`, ct.imagePullPolicy, PULL_POLICIES));
  }
  for (const listField of ['command', 'args']) {
    const v = ct[listField];
    if (v !== undefined && (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))) errs.push(invalidValue(`${path}.${listField}`, v, 'must be a list of strings'));
  }
  if (ct.ports !== undefined) {
    if (!Array.isArray(ct.ports)) errs.push(invalidValue(`${path}.ports`, ct.ports, 'must be a list'));
    else
      ct.ports.forEach((p: Obj, i) => {
        const port = p?.containerPort;
        if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) {
          errs.push(invalidValue(`${path}.ports[${i}].containerPort`, port, 'must be between 1 and 65535, inclusive'));
        }
        if (p?.protocol !== undefined && !PROTOCOLS.includes(p.protocol as string)) errs.push(notSupported(`${path}.ports[${i}].protocol`, p.protocol, PROTOCOLS));
      });
  }
  if (ct.env !== undefined) {
    if (!Array.isArray(ct.env)) errs.push(invalidValue(`${path}.env`, ct.env, 'must be a list'));
    else ct.env.forEach((e: Obj, i) => typeof e?.name !== 'string' || e.name === '' ? errs.push(required(`${path}.env[${i}].name`)) : undefined);
  }
  errs.push(...validateVolumeMounts(ct.volumeMounts, volumes, ct, `${path}.volumeMounts`));
  errs.push(...validateLifecycle(ct.lifecycle, `${path}.lifecycle`, graceS));
  return errs;
}
