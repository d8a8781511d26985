/**
 * Pod and container config files for `runp` and `create`, as crictl reads them: JSON or YAML with
 * the proto field names in snake_case (`log_directory`) or camelCase (`logDirectory`); enums by
 * name or number. Keys inside map fields (labels, annotations, sysctls, …) are data and kept as is.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { AgentError } from '@nodelet/base';
import type { ContainerConfig, PodSandboxConfig } from '@nodelet/cri-client';

const MAP_FIELDS = new Set(['labels', 'annotations', 'sysctls', 'unified', 'labelSelector']);

const camel = (k: string): string => k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

export function camelizeKeys(value: unknown, inMap = false): unknown {
  if (Array.isArray(value)) return value.map((v) => camelizeKeys(v));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (inMap) {
      out[k] = v;
      continue;
    }
    const key = k === 'CDI_devices' ? 'CDIDevices' : camel(k);
    out[key] = camelizeKeys(v, MAP_FIELDS.has(key));
  }
  return out;
}

async function loadConfig(path: string, what: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read ${what} config ${path}: ${(err as Error).message}`, { cause: err });
  }
  let doc: unknown;
  try {
    doc = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `${what} config ${path} is not valid ${path.endsWith('.json') ? 'JSON' : 'YAML/JSON'}: ${(err as Error).message}`, { cause: err });
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new AgentError('ERR_INVALID_ARGUMENT', `${what} config ${path} must be an object`);
  return camelizeKeys(doc) as Record<string, unknown>;
}

export async function loadPodSandboxConfig(path: string): Promise<PodSandboxConfig> {
  const cfg = (await loadConfig(path, 'pod sandbox')) as PodSandboxConfig;
  const md = cfg.metadata;
  if (!md?.name || !md.namespace || !md.uid) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `pod sandbox config ${path} needs metadata.name, metadata.namespace and metadata.uid`);
  }
  return cfg;
}

export async function loadContainerConfig(path: string): Promise<ContainerConfig> {
  const cfg = (await loadConfig(path, 'container')) as ContainerConfig;
  if (!cfg.metadata?.name) throw new AgentError('ERR_INVALID_ARGUMENT', `container config ${path} needs metadata.name`);
  if (!cfg.image?.image) throw new AgentError('ERR_INVALID_ARGUMENT', `container config ${path} needs image.image`);
  return cfg;
}
