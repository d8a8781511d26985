/**
 * A container's environment, as the kubelet builds it (kubelet_pods.go makeEnvironmentVariables):
 * envFrom first, then env in order; `valueFrom` resolves fieldRef, resourceFieldRef,
 * configMapKeyRef and secretKeyRef; `$(VAR)` references to earlier variables are expanded
 * (`$$(VAR)` escapes). A missing non-optional ConfigMap/Secret/key is a CreateContainerConfigError.
 */
import { AgentError } from '@nodelet/base';
import type { Container, Pod } from '@nodelet/api/agent';
import { milliCpu, parseQuantity } from '../util/quantity.js';

/** Reads ConfigMap/Secret data (Secret values already base64-decoded). Undefined when absent. */
export interface EnvSourceReader {
  configMap(namespace: string, name: string, signal: AbortSignal): Promise<Record<string, string> | undefined>;
  secret(namespace: string, name: string, signal: AbortSignal): Promise<Record<string, string> | undefined>;
}

export interface RuntimeFacts {
  podIPs: string[];
  hostIP: string;
  nodeName: string;
}

export interface EnvVarValue {
  key: string;
  value: string;
}

/** Expands `$(NAME)` with `vars`; unknown references stay as written; `$$` is a literal `$`. */
export function expandVars(input: string, vars: ReadonlyMap<string, string>): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch === '$' && input[i + 1] === '$') {
      out += '$';
      i++;
    } else if (ch === '$' && input[i + 1] === '(') {
      const end = input.indexOf(')', i + 2);
      if (end < 0) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, end);
      out += vars.has(name) ? vars.get(name) : input.slice(i, end + 1);
      i = end;
    } else {
      out += ch;
    }
  }
  return out;
}

function configError(msg: string): AgentError {
  return new AgentError('ERR_FAILED_PRECONDITION', msg);
}

/** `metadata.labels['app']` style paths. */
function fieldRefValue(pod: Pod, facts: RuntimeFacts, path: string): string {
  const sub = /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path);
  if (sub) return (sub[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[sub[2]!] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name ?? '';
    case 'metadata.namespace':
      return pod.metadata.namespace ?? '';
    case 'metadata.uid':
      return pod.metadata.uid ?? '';
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? facts.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return facts.hostIP;
    case 'status.hostIPs':
      return facts.hostIP;
    case 'status.podIP':
      return facts.podIPs[0] ?? '';
    case 'status.podIPs':
      return facts.podIPs.join(',');
    default:
      throw configError(`unsupported fieldRef fieldPath "${path}"`);
  }
}

export function resourceFieldValue(pod: Pod, container: Container, res: { containerName?: string; resource: string; divisor?: string }): string {
  const c = res.containerName ? pod.spec?.containers.find((x) => x.name === res.containerName) ?? container : container;
  const [kind, name] = res.resource.split('.') as ['limits' | 'requests', string];
  const q = c.resources?.[kind]?.[name];
  if (q === undefined) return '0';
  const divisor = res.divisor ? parseQuantity(res.divisor) : 1;
  if (name === 'cpu') return String(Math.ceil(milliCpu(q) / 1000 / divisor));
  return String(Math.ceil(parseQuantity(q) / divisor));
}

/**
 * Resolves a container's environment, kubelet's way: envFrom, then env in order (`$(VAR)` may
 * name an earlier variable or a service variable), then the service variables the container
 * did not define itself. Throws ERR_FAILED_PRECONDITION (CreateContainerConfigError).
 */
export async function resolveEnv(
  pod: Pod,
  container: Container,
  facts: RuntimeFacts,
  reader: EnvSourceReader,
  signal: AbortSignal,
  serviceEnv: ReadonlyMap<string, string> = new Map(),
): Promise<EnvVarValue[]> {
  const ns = pod.metadata.namespace ?? 'default';
  const vars = new Map<string, string>();
  const order: string[] = [];
  const set = (k: string, v: string): void => {
    if (!vars.has(k)) order.push(k);
    vars.set(k, v);
  };
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref?.name) continue;
    const kind = from.configMapRef ? 'configmap' : 'secret';
    const data = kind === 'configmap' ? await reader.configMap(ns, ref.name, signal) : await reader.secret(ns, ref.name, signal);
    if (!data) {
      if (ref.optional) continue;
      throw configError(`${kind} "${ref.name}" not found`);
    }
    for (const [k, v] of Object.entries(data)) set(`${from.prefix ?? ''}${k}`, v);
  }
  for (const e of container.env ?? []) {
    let value = '';
    if (e.value !== undefined) value = expandVars(e.value, new Map([...serviceEnv, ...vars]));
    else if (e.valueFrom?.fieldRef) value = fieldRefValue(pod, facts, e.valueFrom.fieldRef.fieldPath);
    else if (e.valueFrom?.resourceFieldRef) value = resourceFieldValue(pod, container, e.valueFrom.resourceFieldRef);
    else if (e.valueFrom?.configMapKeyRef || e.valueFrom?.secretKeyRef) {
      const isCm = !!e.valueFrom.configMapKeyRef;
      const ref = (e.valueFrom.configMapKeyRef ?? e.valueFrom.secretKeyRef)!;
      const kind = isCm ? 'configmap' : 'secret';
      const data = ref.name ? (isCm ? await reader.configMap(ns, ref.name, signal) : await reader.secret(ns, ref.name, signal)) : undefined;
      if (!data || data[ref.key] === undefined) {
        if (ref.optional) continue;
        throw configError(data ? `couldn't find key ${ref.key} in ${kind} ${ns}/${ref.name}` : `${kind} "${ref.name}" not found`);
      }
      value = data[ref.key]!;
    }
    set(e.name, value);
  }
  const own = order.map((key) => ({ key, value: vars.get(key)! }));
  return [...own, ...[...serviceEnv].filter(([k]) => !vars.has(k)).map(([key, value]) => ({ key, value }))];
}
