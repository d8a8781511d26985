/**
 * PodSecurity admission's configuration: defaults for namespaces without labels and the
 * exemptions, read as kube-apiserver reads them from `--admission-control-config-file`: an
 * AdmissionConfiguration (apiserver.config.k8s.io/v1) whose `PodSecurity` plugin entry holds a
 * PodSecurityConfiguration (pod-security.admission.config.k8s.io/v1, v1beta1 or v1alpha1)
 * inline under `configuration` or in a file named by `path` (relative to the config file).
 * Unknown fields and other plugins are refused: this server runs no other configurable plugin.
 */
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { dns1123LabelProblem, dns1123SubdomainProblem } from '@nodelet/api';
import YAML from 'yaml';
import { isPlainObject, type Json } from '../../object.js';
import { isLevel, LEVEL_ERROR, MODES, parseVersion, VERSION_ERROR, type Level, type Policy } from './policy.js';

export interface PodSecurityConfig {
  defaults: Policy;
  exemptions: { usernames: ReadonlySet<string>; namespaces: ReadonlySet<string>; runtimeClasses: ReadonlySet<string> };
}

const ADMISSION_CONFIG_VERSIONS = new Set(['apiserver.config.k8s.io/v1', 'apiserver.k8s.io/v1alpha1']);
const POD_SECURITY_VERSIONS = new Set(['pod-security.admission.config.k8s.io/v1', 'pod-security.admission.config.k8s.io/v1beta1', 'pod-security.admission.config.k8s.io/v1alpha1']);
const DEFAULT_KEYS = ['enforce', 'enforce-version', 'audit', 'audit-version', 'warn', 'warn-version'];
const EXEMPTION_KEYS = ['usernames', 'namespaces', 'runtimeClasses'] as const;

function unknownKeys(o: Json, known: readonly string[], where: string): void {
  const extra = Object.keys(o).filter((k) => !known.includes(k));
  if (extra.length) throw new Error(`${where}: unknown field${extra.length > 1 ? 's' : ''} ${extra.map((k) => `"${k}"`).join(', ')}`);
}

function stringList(v: unknown, path: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) throw new Error(`${path}: must be a list of strings`);
  return v as string[];
}

/**
 * A PodSecurityConfiguration object → the config, with upstream's defaulting (every level
 * `privileged`, every version `latest`) and validation; throws naming the first bad field.
 */
export function podSecurityConfigFrom(obj: unknown): PodSecurityConfig {
  if (!isPlainObject(obj)) throw new Error('PodSecurityConfiguration: must be an object');
  unknownKeys(obj, ['apiVersion', 'kind', 'defaults', 'exemptions'], 'PodSecurityConfiguration');
  if (!POD_SECURITY_VERSIONS.has(String(obj.apiVersion)) || obj.kind !== 'PodSecurityConfiguration') {
    throw new Error(`PodSecurity configuration must be kind PodSecurityConfiguration of ${[...POD_SECURITY_VERSIONS].join(', ')}; got ${String(obj.kind)} ${String(obj.apiVersion)}`);
  }
  const defaults = obj.defaults ?? {};
  if (!isPlainObject(defaults)) throw new Error('defaults: must be an object');
  unknownKeys(defaults, DEFAULT_KEYS, 'defaults');
  const policy = {} as Policy;
  for (const mode of MODES) {
    const level = defaults[mode] === undefined || defaults[mode] === '' ? 'privileged' : String(defaults[mode]);
    if (!isLevel(level)) throw new Error(`defaults.${mode}: Invalid value: "${level}": ${LEVEL_ERROR}`);
    const versionText = defaults[`${mode}-version`] === undefined || defaults[`${mode}-version`] === '' ? 'latest' : String(defaults[`${mode}-version`]);
    const version = parseVersion(versionText);
    if (version === undefined) throw new Error(`defaults.${mode}-version: Invalid value: "${versionText}": ${VERSION_ERROR}`);
    policy[mode] = { level: level as Level, version };
  }
  const exemptions = obj.exemptions ?? {};
  if (!isPlainObject(exemptions)) throw new Error('exemptions: must be an object');
  unknownKeys(exemptions, EXEMPTION_KEYS, 'exemptions');
  const sets = {} as Record<(typeof EXEMPTION_KEYS)[number], Set<string>>;
  for (const key of EXEMPTION_KEYS) {
    const seen = new Set<string>();
    stringList(exemptions[key], `exemptions.${key}`).forEach((value, i) => {
      const path = `exemptions.${key}[${i}]`;
      const problem = key === 'namespaces' ? dns1123LabelProblem(value) : key === 'runtimeClasses' ? dns1123SubdomainProblem(value) : value === '' ? 'username must not be empty' : undefined;
      if (problem) throw new Error(`${path}: Invalid value: "${value}": ${problem}`);
      if (seen.has(value)) throw new Error(`${path}: Duplicate value: "${value}"`);
      seen.add(value);
    });
    sets[key] = seen;
  }
  return { defaults: policy, exemptions: sets };
}

/**
 * Reads an AdmissionConfiguration file (YAML or JSON) and returns its PodSecurity configuration,
 * or undefined when it configures no plugin. For `nodelet server --admission-control-config-file`.
 */
export async function loadAdmissionConfiguration(file: string): Promise<PodSecurityConfig | undefined> {
  const doc: unknown = YAML.parse(await readFile(file, 'utf8'));
  if (!isPlainObject(doc)) throw new Error(`${file}: must be an AdmissionConfiguration object`);
  unknownKeys(doc, ['apiVersion', 'kind', 'plugins'], file);
  if (!ADMISSION_CONFIG_VERSIONS.has(String(doc.apiVersion)) || doc.kind !== 'AdmissionConfiguration') {
    throw new Error(`${file}: must be kind AdmissionConfiguration of apiserver.config.k8s.io/v1; got ${String(doc.kind)} ${String(doc.apiVersion)}`);
  }
  const plugins = doc.plugins ?? [];
  if (!Array.isArray(plugins)) throw new Error(`${file}: plugins: must be a list`);
  let found: PodSecurityConfig | undefined;
  for (const [i, p] of plugins.entries()) {
    if (!isPlainObject(p)) throw new Error(`${file}: plugins[${i}]: must be an object`);
    unknownKeys(p, ['name', 'path', 'configuration'], `${file}: plugins[${i}]`);
    if (p.name !== 'PodSecurity') throw new Error(`${file}: plugins[${i}]: nodelet has no configurable admission plugin "${String(p.name)}" (only PodSecurity)`);
    if (found) throw new Error(`${file}: plugins[${i}]: PodSecurity is configured twice`);
    if (p.configuration !== undefined && p.path !== undefined) throw new Error(`${file}: plugins[${i}]: give path or configuration, not both`);
    const body = p.path !== undefined ? YAML.parse(await readFile(resolve(dirname(file), String(p.path)), 'utf8')) : p.configuration;
    try {
      // A plugin entry without a configuration takes the defaults, as upstream's loader does.
      found = podSecurityConfigFrom(body ?? { apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration' });
    } catch (err) {
      throw new Error(`${file}: PodSecurity: ${(err as Error).message}`, { cause: err });
    }
  }
  return found;
}
