/**
 * networking.k8s.io/v1 Ingress, IngressClass and NetworkPolicy validation, with upstream's field
 * paths and messages (pkg/apis/networking/validation). Metadata is checked by the server's common
 * ObjectMeta validation; these cover the spec.
 */
import { isIP } from 'node:net';
import { dns1123LabelProblem, dns1123SubdomainProblem, isDns1123Subdomain } from './names.js';
import { forbiddenField, invalidValue, notSupported, required, tooLong, type FieldError } from './field-error.js';
import { labelSelectorErrors } from './policy.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const has = (o: Obj, k: string): boolean => o[k] !== undefined && o[k] !== null;

const PATH_TYPES = ['Exact', 'ImplementationSpecific', 'Prefix'];
const BAD_PATH_SEQUENCES = ['//', '/./', '/../', '%2f', '%2F'];
const BAD_PATH_SUFFIXES = ['/..', '/.'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const POLICY_TYPES = ['Ingress', 'Egress'];
const SCOPES = ['Cluster', 'Namespace'];
/** IANA_SVC_NAME (validation.IsValidPortName). */
const PORT_NAME = /^(?=.*[a-z])[a-z0-9]([a-z0-9]|-(?!-))*[a-z0-9]$|^[a-z]$/;
const PORT_NAME_MESSAGE = 'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-), with at least one letter, no two hyphens adjacent and none at either end, at most 15 characters';
const PORT_NUMBER_MESSAGE = 'must be between 1 and 65535, inclusive';
const WILDCARD_MESSAGE =
  "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_MESSAGE =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const CIDR_MESSAGE = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';
const SEGMENT_PATH = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

const portNameOk = (s: string): boolean => s.length <= 15 && PORT_NAME.test(s);
const portNumberOk = (n: unknown): boolean => typeof n === 'number' && Number.isInteger(n) && n >= 1 && n <= 65535;

/** A DNS name, possibly `*.`-prefixed (IsDNS1123Subdomain / IsWildcardDNS1123Subdomain). */
function hostErrors(host: string, field: string): FieldError[] {
  if (host.includes('*')) return host.startsWith('*.') && isDns1123Subdomain(host.slice(2)) ? [] : [invalidValue(field, host, WILDCARD_MESSAGE)];
  const p = dns1123SubdomainProblem(host);
  return p ? [invalidValue(field, host, p)] : [];
}

/** Name or kind of a referenced object (IsValidPathSegmentName). */
function segmentErrors(v: string, field: string): FieldError[] {
  if (v === '.' || v === '..') return [invalidValue(field, v, `may not be '${v}'`)];
  for (const c of ['/', '%']) if (v.includes(c)) return [invalidValue(field, v, `may not contain '${c}'`)];
  return [];
}

function typedReferenceErrors(ref: Obj, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (typeof ref.apiGroup === 'string') {
    const p = dns1123SubdomainProblem(ref.apiGroup);
    if (p) errs.push(invalidValue(`${path}.apiGroup`, ref.apiGroup, p));
  }
  for (const k of ['kind', 'name'] as const) {
    const v = typeof ref[k] === 'string' ? ref[k] : '';
    if (!v) errs.push(required(`${path}.${k}`, `Required value: ${k} is required`));
    else errs.push(...segmentErrors(v, `${path}.${k}`));
  }
  return errs;
}

function backendErrors(b: unknown, path: string): FieldError[] {
  const backend = isObj(b) ? b : {};
  const hasResource = has(backend, 'resource');
  const hasService = has(backend, 'service');
  if (hasResource && hasService) return [invalidValue(path, '', 'cannot set both resource and service backends')];
  if (hasResource) return typedReferenceErrors(isObj(backend.resource) ? backend.resource : {}, `${path}.resource`);
  if (!hasService) return [invalidValue(path, '', 'resource or service backend is required')];
  const svc = isObj(backend.service) ? backend.service : {};
  const errs: FieldError[] = [];
  const name = typeof svc.name === 'string' ? svc.name : '';
  if (!name) errs.push(required(`${path}.service.name`));
  else if (name.length > 63 || !DNS1035_LABEL.test(name)) errs.push(invalidValue(`${path}.service.name`, name, name.length > 63 ? 'must be no more than 63 characters' : DNS1035_MESSAGE));
  const port = isObj(svc.port) ? svc.port : {};
  const portName = typeof port.name === 'string' ? port.name : '';
  const portNumber = typeof port.number === 'number' ? port.number : 0;
  if (portName && portNumber) errs.push(invalidValue(path, '', 'cannot set both port name & port number'));
  else if (portName) {
    if (!portNameOk(portName)) errs.push(invalidValue(`${path}.service.port.name`, portName, PORT_NAME_MESSAGE));
  } else if (portNumber) {
    if (!portNumberOk(portNumber)) errs.push(invalidValue(`${path}.service.port.number`, portNumber, PORT_NUMBER_MESSAGE));
  } else errs.push(required(path, 'Required value: port name or number is required'));
  return errs;
}

function httpPathErrors(p: unknown, path: string): FieldError[] {
  const hp = isObj(p) ? p : {};
  if (!has(hp, 'pathType')) return [required(`${path}.pathType`, 'Required value: pathType must be specified')];
  const errs: FieldError[] = [];
  const value = typeof hp.path === 'string' ? hp.path : '';
  if (hp.pathType === 'Exact' || hp.pathType === 'Prefix') {
    if (!value.startsWith('/')) errs.push(invalidValue(`${path}.path`, value, 'must be an absolute path'));
    for (const seq of BAD_PATH_SEQUENCES) if (value.includes(seq)) errs.push(invalidValue(`${path}.path`, value, `must not contain '${seq}'`));
    for (const suf of BAD_PATH_SUFFIXES) if (value.endsWith(suf)) errs.push(invalidValue(`${path}.path`, value, `cannot end with '${suf}'`));
  } else if (hp.pathType === 'ImplementationSpecific') {
    if (value && !value.startsWith('/')) errs.push(invalidValue(`${path}.path`, value, 'must be an absolute path'));
  } else {
    errs.push(notSupported(`${path}.pathType`, hp.pathType, PATH_TYPES));
  }
  return [...errs, ...backendErrors(hp.backend, `${path}.backend`)];
}

/** Ingress spec (ValidateIngressSpec) and, on create, the class annotation agreeing with ingressClassName. */
export function validateIngress(ing: Obj, old?: Obj): FieldError[] {
  const spec = isObj(ing.spec) ? ing.spec : {};
  const errs: FieldError[] = [];
  const rules = arr(spec.rules);
  if (rules.length === 0 && !has(spec, 'defaultBackend')) errs.push(invalidValue('spec', spec.rules ?? null, 'either `defaultBackend` or `rules` must be specified'));
  if (has(spec, 'defaultBackend')) errs.push(...backendErrors(spec.defaultBackend, 'spec.defaultBackend'));
  rules.forEach((r, i) => {
    const rule = isObj(r) ? r : {};
    const path = `spec.rules[${i}]`;
    const host = typeof rule.host === 'string' ? rule.host : '';
    if (host) {
      if (isIP(host)) errs.push(invalidValue(`${path}.host`, host, 'must be a DNS name, not an IP address'));
      errs.push(...hostErrors(host, `${path}.host`));
    }
    if (isObj(rule.http)) {
      const paths = arr(rule.http.paths);
      if (paths.length === 0) errs.push(required(`${path}.http.paths`));
      paths.forEach((p, j) => errs.push(...httpPathErrors(p, `${path}.http.paths[${j}]`)));
    }
  });
  arr(spec.tls).forEach((t, i) => {
    const tls = isObj(t) ? t : {};
    arr(tls.hosts).forEach((h, j) => errs.push(...hostErrors(String(h), `spec.tls[${i}].hosts[${j}]`)));
    if (typeof tls.secretName === 'string' && tls.secretName) {
      const p = dns1123SubdomainProblem(tls.secretName);
      if (p) errs.push(invalidValue(`spec.tls[${i}].secretName`, tls.secretName, p));
    }
  });
  if (typeof spec.ingressClassName === 'string') {
    const p = dns1123SubdomainProblem(spec.ingressClassName);
    if (p) errs.push(invalidValue('spec.ingressClassName', spec.ingressClassName, p));
  }
  const annotations = isObj(ing.metadata) && isObj((ing.metadata as Obj).annotations) ? ((ing.metadata as Obj).annotations as Obj) : {};
  const annotated = annotations['kubernetes.io/ingress.class'];
  if (!old && typeof annotated === 'string' && typeof spec.ingressClassName === 'string' && annotated !== spec.ingressClassName) {
    errs.push(invalidValue('annotations.kubernetes.io/ingress.class', annotated, 'must match `ingressClassName` when both are specified'));
  }
  return errs;
}

/** Ingress status (ValidateIngressLoadBalancerStatus). */
export function validateIngressStatus(ing: Obj): FieldError[] {
  const lb = isObj(ing.status) && isObj((ing.status as Obj).loadBalancer) ? ((ing.status as Obj).loadBalancer as Obj) : {};
  const errs: FieldError[] = [];
  arr(lb.ingress).forEach((e, i) => {
    const x = isObj(e) ? e : {};
    const path = `status.loadBalancer.ingress[${i}]`;
    if (typeof x.ip === 'string' && x.ip && !isIP(x.ip)) errs.push(invalidValue(`${path}.ip`, x.ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'));
    if (typeof x.hostname === 'string' && x.hostname) {
      const p = dns1123SubdomainProblem(x.hostname);
      if (p) errs.push(invalidValue(`${path}.hostname`, x.hostname, p));
      if (isIP(x.hostname)) errs.push(invalidValue(`${path}.hostname`, x.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}

/** validation.IsDomainPrefixedPath: `<dns subdomain>/<path>`. */
function domainPrefixedPathErrors(v: string, field: string): FieldError[] {
  if (!v) return [required(field)];
  const slash = v.indexOf('/');
  if (slash < 0) return [invalidValue(field, v, 'must be a domain-prefixed path (such as "acme.io/foo")')];
  const errs: FieldError[] = [];
  const host = v.slice(0, slash);
  const hp = dns1123SubdomainProblem(host);
  if (hp) errs.push(invalidValue(field, host, hp));
  if (!SEGMENT_PATH.test(v.slice(slash))) errs.push(invalidValue(field, v.slice(slash), "Invalid path: must match the regex ^[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+$"));
  return errs;
}

/** IngressClass spec; the controller is immutable. */
export function validateIngressClass(ic: Obj, old?: Obj): FieldError[] {
  const spec = isObj(ic.spec) ? ic.spec : {};
  const controller = typeof spec.controller === 'string' ? spec.controller : '';
  const errs: FieldError[] = [];
  if (old) {
    const was = isObj(old.spec) ? old.spec.controller : undefined;
    if ((was ?? '') !== controller) errs.push(invalidValue('spec.controller', controller, 'field is immutable'));
  }
  if (controller.length > 250) errs.push(tooLong('spec.controller', 250));
  errs.push(...domainPrefixedPathErrors(controller, 'spec.controller'));
  if (isObj(spec.parameters)) {
    const params = spec.parameters;
    errs.push(...typedReferenceErrors(params, 'spec.parameters'));
    if (!has(params, 'scope')) errs.push(required('spec.parameters.scope'));
    else if (!SCOPES.includes(params.scope as string)) errs.push(notSupported('spec.parameters.scope', params.scope, SCOPES));
    else if (params.scope === 'Namespace') {
      if (!has(params, 'namespace')) errs.push(required('spec.parameters.namespace', "Required value: `parameters.scope` is set to 'Namespace'"));
      else {
        const p = dns1123LabelProblem(String(params.namespace));
        if (p) errs.push(invalidValue('spec.parameters.namespace', params.namespace, p));
      }
    } else if (has(params, 'namespace')) errs.push(forbiddenField('spec.parameters.namespace', "`parameters.scope` is set to 'Cluster'"));
  }
  return errs;
}

/** An address as a bigint and its width in bits, or undefined. */
function ipBits(ip: string): { value: bigint; width: number } | undefined {
  const v = isIP(ip);
  if (v === 4) return { value: ip.split('.').reduce((a, o) => (a << 8n) | BigInt(Number(o)), 0n), width: 32 };
  if (v !== 6) return undefined;
  const [head, tail] = ip.includes('::') ? ip.split('::') : [ip, undefined];
  const groups = (s: string | undefined): string[] => (s ? s.split(':') : []);
  const expand = (g: string[]): string[] => g.flatMap((x) => (x.includes('.') ? (() => { const b = ipBits(x)!.value; return [(b >> 16n).toString(16), (b & 0xffffn).toString(16)]; })() : [x]));
  const h = expand(groups(head));
  const t = expand(groups(tail));
  const all = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return { value: all.reduce((a, g) => (a << 16n) | BigInt(parseInt(g, 16)), 0n), width: 128 };
}

function parseCidr(cidr: string): { base: bigint; bits: number; width: number } | undefined {
  const slash = cidr.indexOf('/');
  if (slash < 0 || !/^[0-9]{1,3}$/.test(cidr.slice(slash + 1))) return undefined;
  const ip = ipBits(cidr.slice(0, slash));
  const bits = Number(cidr.slice(slash + 1));
  if (!ip || bits > ip.width) return undefined;
  const host = ip.width - bits;
  return { base: (ip.value >> BigInt(host)) << BigInt(host), bits, width: ip.width };
}

function ipBlockErrors(b: Obj, path: string): FieldError[] {
  const cidr = typeof b.cidr === 'string' ? b.cidr : '';
  if (!cidr) return [required(`${path}.cidr`)];
  const net = parseCidr(cidr);
  if (!net) return [invalidValue(`${path}.cidr`, cidr, CIDR_MESSAGE)];
  const errs: FieldError[] = [];
  arr(b.except).forEach((e, i) => {
    const field = `${path}.except[${i}]`;
    const ex = parseCidr(String(e));
    if (!ex) return errs.push(invalidValue(field, e, CIDR_MESSAGE));
    const inside = ex.width === net.width && ex.base >> BigInt(net.width - net.bits) === net.base >> BigInt(net.width - net.bits);
    if (!inside || net.bits >= ex.bits) errs.push(invalidValue(field, e, 'must be a strict subset of `cidr`'));
    return undefined;
  });
  return errs;
}

function policyPortErrors(p: unknown, path: string): FieldError[] {
  const port = isObj(p) ? p : {};
  const errs: FieldError[] = [];
  if (has(port, 'protocol') && !PROTOCOLS.includes(port.protocol as string)) errs.push(notSupported(`${path}.protocol`, port.protocol, PROTOCOLS));
  const end = has(port, 'endPort') ? port.endPort : undefined;
  if (!has(port, 'port')) {
    if (end !== undefined) errs.push(invalidValue(`${path}.endPort`, end, 'may not be specified when `port` is not specified'));
  } else if (typeof port.port === 'number') {
    if (!portNumberOk(port.port)) errs.push(invalidValue(`${path}.port`, port.port, PORT_NUMBER_MESSAGE));
    if (end !== undefined) {
      if (typeof end === 'number' && end < port.port) errs.push(invalidValue(`${path}.endPort`, port.port, 'must be greater than or equal to `port`'));
      if (!portNumberOk(end)) errs.push(invalidValue(`${path}.endPort`, end, PORT_NUMBER_MESSAGE));
    }
  } else {
    if (end !== undefined) errs.push(invalidValue(`${path}.endPort`, end, 'may not be specified when `port` is non-numeric'));
    if (!portNameOk(String(port.port))) errs.push(invalidValue(`${path}.port`, port.port, PORT_NAME_MESSAGE));
  }
  return errs;
}

function peerErrors(p: unknown, path: string): FieldError[] {
  const peer = isObj(p) ? p : {};
  const errs: FieldError[] = [];
  let peers = 0;
  for (const k of ['podSelector', 'namespaceSelector'] as const) {
    if (!has(peer, k)) continue;
    peers++;
    errs.push(...labelSelectorErrors(peer[k], `${path}.${k}`));
  }
  if (has(peer, 'ipBlock')) {
    peers++;
    errs.push(...ipBlockErrors(isObj(peer.ipBlock) ? peer.ipBlock : {}, `${path}.ipBlock`));
  }
  if (peers === 0) errs.push(required(path, 'Required value: must specify a peer'));
  else if (peers > 1 && has(peer, 'ipBlock')) errs.push(forbiddenField(path, 'may not specify both ipBlock and another peer'));
  return errs;
}

/** NetworkPolicy spec (ValidateNetworkPolicySpec). */
export function validateNetworkPolicy(np: Obj): FieldError[] {
  const spec = isObj(np.spec) ? np.spec : {};
  const errs = labelSelectorErrors(spec.podSelector, 'spec.podSelector');
  for (const [dir, peersKey] of [['ingress', 'from'], ['egress', 'to']] as const) {
    arr(spec[dir]).forEach((r, i) => {
      const rule = isObj(r) ? r : {};
      arr(rule.ports).forEach((p, j) => errs.push(...policyPortErrors(p, `spec.${dir}[${i}].ports[${j}]`)));
      arr(rule[peersKey]).forEach((p, j) => errs.push(...peerErrors(p, `spec.${dir}[${i}].${peersKey}[${j}]`)));
    });
  }
  const types = arr(spec.policyTypes);
  if (types.length > POLICY_TYPES.length) return [...errs, invalidValue('spec.policyTypes', types, 'may not specify more than two policyTypes')];
  types.forEach((t, i) => {
    if (!POLICY_TYPES.includes(t as string)) errs.push(notSupported(`spec.policyTypes[${i}]`, t, POLICY_TYPES));
  });
  return errs;
}

/** NetworkPolicy defaults (SetDefaults_NetworkPolicyPort, SetDefaults_NetworkPolicy): TCP ports, policyTypes from the rules. */
export function defaultNetworkPolicy(np: Obj): void {
  if (!isObj(np.spec)) np.spec = {};
  const spec = np.spec as Obj;
  if (!isObj(spec.podSelector)) spec.podSelector = {};
  for (const [dir] of [['ingress'], ['egress']] as const) {
    for (const r of arr(spec[dir])) for (const p of arr(isObj(r) ? r.ports : undefined)) if (isObj(p) && !has(p, 'protocol')) p.protocol = 'TCP';
  }
  if (arr(spec.policyTypes).length === 0) spec.policyTypes = arr(spec.egress).length ? ['Ingress', 'Egress'] : ['Ingress'];
}
