/** Deployment/ReplicaSet and Service validation (selector ↔ template labels, replicas, ports). */
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { validatePodSpec } from './pod.js';

type Obj = Record<string, unknown>;

/** spec.selector must be non-empty and select spec.template.metadata.labels. */
export function validateReplicatedSpec(spec: unknown, path = 'spec'): FieldError[] {
  if (!spec || typeof spec !== 'object') return [required(path)];
  const s = spec as Obj;
  const errs: FieldError[] = [];
  if (s.replicas !== undefined && (!Number.isInteger(s.replicas) || (s.replicas as number) < 0)) {
    errs.push(invalidValue(`${path}.replicas`, s.replicas, 'must be greater than or equal to 0'));
  }
  const template = s.template as Obj | undefined;
  if (!template) {
    if (!s.selector) errs.push(required(`${path}.selector`));
    return [...errs, required(`${path}.template`)];
  }
  errs.push(...selectorErrors(s.selector, template, path));
  errs.push(...validatePodSpec(template.spec, `${path}.template.spec`));
  return errs;
}

/**
 * The selector must be non-empty and select the template's labels (ValidatePodTemplateSpecForReplicaSet
 * and friends); matchExpressions are checked with the same semantics as label selectors.
 */
export function selectorErrors(selector: unknown, template: Obj, path: string): FieldError[] {
  const sel = selector as Obj | undefined;
  const matchLabels = (sel?.matchLabels ?? {}) as Record<string, string>;
  const exprs = (sel?.matchExpressions ?? []) as Array<{ key: string; operator: string; values?: string[] }>;
  if (!sel || (Object.keys(matchLabels).length === 0 && exprs.length === 0)) return [required(`${path}.selector`)];
  const labels = ((template.metadata as Obj | undefined)?.labels ?? {}) as Record<string, string>;
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(labels, k);
  const ok =
    Object.entries(matchLabels).every(([k, v]) => labels[k] === v) &&
    exprs.every((e) => {
      if (e.operator === 'In') return has(e.key) && (e.values ?? []).includes(labels[e.key]!);
      if (e.operator === 'NotIn') return !has(e.key) || !(e.values ?? []).includes(labels[e.key]!);
      if (e.operator === 'Exists') return has(e.key);
      if (e.operator === 'DoesNotExist') return !has(e.key);
      return false;
    });
  return ok ? [] : [invalidValue(`${path}.template.metadata.labels`, labels, '`selector` does not match template `labels`')];
}

/** DaemonSet and StatefulSet pods run forever: their template's restartPolicy must be Always. */
export function validateAlwaysRestartingSpec(spec: unknown, path = 'spec'): FieldError[] {
  const errs = validateReplicatedSpec(spec, path);
  const podSpec = ((spec as Obj | undefined)?.template as Obj | undefined)?.spec as Obj | undefined;
  if (podSpec && podSpec.restartPolicy !== undefined && podSpec.restartPolicy !== 'Always') {
    errs.push(notSupported(`${path}.template.spec.restartPolicy`, podSpec.restartPolicy, ['Always']));
  }
  return errs;
}

const SERVICE_TYPES = ['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'];

export function validateServiceSpec(spec: unknown): FieldError[] {
  if (!spec || typeof spec !== 'object') return [required('spec')];
  const s = spec as Obj;
  const errs: FieldError[] = [];
  if (s.type !== undefined && !SERVICE_TYPES.includes(s.type as string)) errs.push(notSupported('spec.type', s.type, SERVICE_TYPES));
  // No load balancer here honours a requested address (the servicelb controller picks from its
  // pool), and a field accepted and ignored would promise one: refused instead.
  if (typeof s.loadBalancerIP === 'string' && s.loadBalancerIP !== '') errs.push(forbiddenField('spec.loadBalancerIP', 'requesting a load balancer address is not supported by this server (the servicelb controller assigns one from its pool)'));
  const ipv4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
  if (Array.isArray(s.externalIPs)) {
    s.externalIPs.forEach((ip, i) => {
      if (typeof ip !== 'string' || !ipv4.test(ip)) errs.push(invalidValue(`spec.externalIPs[${i}]`, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    });
  }
  if (Array.isArray(s.loadBalancerSourceRanges)) {
    if (s.type !== 'LoadBalancer') errs.push(forbiddenField('spec.loadBalancerSourceRanges', "may only be used when `type` is 'LoadBalancer'"));
    s.loadBalancerSourceRanges.forEach((r, i) => {
      const [ip, bits] = typeof r === 'string' ? r.trim().split('/') : [];
      if (!ip || !ipv4.test(ip) || !/^\d{1,2}$/.test(bits ?? '') || Number(bits) > 32) errs.push(invalidValue(`spec.loadBalancerSourceRanges[${i}]`, r, 'must be a valid IP address or CIDR'));
    });
  }
  const ports = s.ports;
  if (s.type !== 'ExternalName' && s.clusterIP !== 'None' && (!Array.isArray(ports) || ports.length === 0)) errs.push(required('spec.ports'));
  if (Array.isArray(ports)) {
    ports.forEach((p: Obj, i) => {
      if (!Number.isInteger(p?.port) || (p.port as number) < 1 || (p.port as number) > 65535) {
        errs.push(invalidValue(`spec.ports[${i}].port`, p?.port, 'must be between 1 and 65535, inclusive'));
      }
      if (ports.length > 1 && !p?.name) errs.push(required(`spec.ports[${i}].name`));
    });
  }
  return errs;
}
