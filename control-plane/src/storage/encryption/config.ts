/**
 * `--encryption-provider-config`: kube-apiserver's EncryptionConfiguration
 * (apiserver.config.k8s.io/v1), read once at start.
 *
 *   file (YAML/JSON) ─▶ parseEncryptionConfig (field checks with upstream's messages)
 *                    ─▶ EncryptionRule[] (resource patterns ─▶ one transformer per entry)
 *                    ─▶ transformersByPrefix (the storage prefixes of the served resources)
 *
 * Supported providers: aesgcm, aescbc, secretbox, identity. kms needs a KMS plugin over gRPC,
 * which nodelet does not speak: it is refused rather than accepted and ignored.
 */
import { readFile, stat } from 'node:fs/promises';
import { parse } from 'yaml';
import { AgentError, type Logger } from '@nodelet/base';
import { aesCbc, aesGcm, identity, prefixChain, secretBox, type PrefixedTransformer, type ValueTransformer } from './providers.js';

/** One `resources[]` entry: which resources, and the transformer its providers make. */
export interface EncryptionRule {
  /** As written: `secrets`, `deployments.apps`, `*.apps`, `*.` (every core resource), `*.*`. */
  resources: string[];
  transformer: ValueTransformer;
  /** The provider names in order (`aescbc`, `identity`, …), for logs. */
  providers: string[];
}

/** What a resource pattern is matched against (a served ResourceDef and its storage prefix). */
export interface StoredResource {
  group: string;
  plural: string;
  /** `/registry/<segment>/`. */
  prefix: string;
}

const AES_KEY_SIZES = [16, 24, 32];
const SECRETBOX_KEY_SIZES = [32];
const PROVIDERS = ['aesgcm', 'aescbc', 'secretbox', 'identity', 'kms'] as const;
const KEYED: Record<string, { sizes: number[]; prefix: string; make: (k: Uint8Array) => ValueTransformer; noKey: string }> = {
  aesgcm: { sizes: AES_KEY_SIZES, prefix: 'k8s:enc:aesgcm:v1:', make: aesGcm, noKey: 'no matching key was found for the provided AES transformer' },
  aescbc: { sizes: AES_KEY_SIZES, prefix: 'k8s:enc:aescbc:v1:', make: aesCbc, noKey: 'no matching key was found for the provided AES transformer' },
  secretbox: { sizes: SECRETBOX_KEY_SIZES, prefix: 'k8s:enc:secretbox:v1:', make: secretBox, noKey: 'no matching key was found for the provided Secretbox transformer' },
};

/** Reads and parses the file; warns when group or others may read it (it holds the keys). */
export async function loadEncryptionConfig(path: string, log?: Logger): Promise<EncryptionRule[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
    const mode = (await stat(path)).mode & 0o777;
    if (mode & 0o077) log?.warn({ path, mode: mode.toString(8) }, 'The encryption provider configuration holds the encryption keys but group or others may read it; chmod 600 it');
  } catch (err) {
    throw configError(path, `error opening encryption provider configuration file "${path}": ${(err as Error).message}`, err);
  }
  if (text.trim() === '') throw configError(path, `encryption provider configuration file "${path}" is empty`);
  return parseEncryptionConfig(text, path);
}

/** Parses an EncryptionConfiguration document; every problem is reported, with its field path. */
export function parseEncryptionConfig(text: string, path: string): EncryptionRule[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw configError(path, `error while parsing file: ${(err as Error).message}`, err);
  }
  const errors: string[] = [];
  const rules: EncryptionRule[] = [];
  if (!isObject(doc)) throw configError(path, 'error while parsing file: not an EncryptionConfiguration object');
  if (doc.kind !== 'EncryptionConfiguration' || doc.apiVersion !== 'apiserver.config.k8s.io/v1') {
    throw configError(path, `error while parsing file: got unexpected config type: ${String(doc.apiVersion)}, Kind=${String(doc.kind)} (want apiserver.config.k8s.io/v1, Kind=EncryptionConfiguration)`);
  }
  unknownFields(doc, ['kind', 'apiVersion', 'resources'], '', errors);
  const entries = Array.isArray(doc.resources) ? doc.resources : [];
  if (entries.length === 0) errors.push('resources: Required value: at least one resources is required');
  const seen = new Map<string, string>();
  entries.forEach((entry, i) => {
    const at = `resources[${i}]`;
    if (!isObject(entry)) return void errors.push(`${at}: Invalid value: must be an object`);
    unknownFields(entry, ['resources', 'providers'], at, errors);
    const names = Array.isArray(entry.resources) ? entry.resources : [];
    const providers = Array.isArray(entry.providers) ? entry.providers : [];
    if (names.length === 0) errors.push(`${at}.resources: Required value: at least one ${at}.resources is required`);
    if (providers.length === 0) errors.push(`${at}.providers: Required value: at least one ${at}.providers is required`);
    names.forEach((n, j) => {
      const why = typeof n === 'string' ? resourcePatternError(n) : 'must be a string';
      if (why) return void errors.push(`${at}.resources[${j}]: Invalid value: ${JSON.stringify(n)}: ${why}`);
      const earlier = seen.get(n as string);
      if (earlier) errors.push(`${at}.resources[${j}]: Duplicate value: ${JSON.stringify(n)}: already listed at ${earlier}`);
      seen.set(n as string, `${at}.resources[${j}]`);
    });
    const chain: PrefixedTransformer[] = [];
    const kinds: string[] = [];
    providers.forEach((p, j) => {
      const made = provider(p, `${at}.providers[${j}]`, errors);
      if (made) {
        chain.push(made.entry);
        kinds.push(made.kind);
      }
    });
    if (chain.length === providers.length && chain.length > 0) {
      rules.push({ resources: names as string[], transformer: prefixChain(chain, 'no matching prefix found'), providers: kinds });
    }
  });
  if (errors.length) throw configError(path, `error while parsing file: ${errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`}`);
  return rules;
}

/**
 * The transformer of each built-in resource's storage prefix: a resource takes the first rule that
 * names it (exactly or by a wildcard). A pattern that matches no built-in resource is refused (it
 * would protect nothing) unless it may name custom resources: `<resource>.<group>` or `*.<group>`
 * of a group with a dot that no built-in resource has, matched when their objects are stored
 * ({@link customTransformer}).
 */
export function transformersByPrefix(rules: readonly EncryptionRule[], resources: readonly StoredResource[], path: string): Map<string, ValueTransformer> {
  const out = new Map<string, { transformer: ValueTransformer; by: string }>();
  const builtinGroups = new Set(resources.map((r) => r.group));
  for (const rule of rules) {
    for (const pattern of rule.resources) {
      const matched = resources.filter((r) => matches(pattern, r));
      const group = pattern.slice(pattern.indexOf('.') + 1);
      const mayBeCustom = pattern.includes('.') && group !== '*' && group.includes('.') && !builtinGroups.has(group);
      if (matched.length === 0 && !mayBeCustom) throw configError(path, `resource "${pattern}" is not one this server stores (its resources: ${resources.map(name).join(', ')}; a custom resource is named <plural>.<group>)`);
      for (const r of matched) {
        const had = out.get(r.prefix);
        if (!had) out.set(r.prefix, { transformer: rule.transformer, by: pattern });
        // Two resources in one storage prefix (events and events.events.k8s.io) must share providers.
        else if (had.transformer !== rule.transformer && !isWildcard(pattern)) {
          throw configError(path, `resource "${pattern}" is stored under ${r.prefix} like "${had.by}", which an earlier entry already configures; list them in one entry`);
        }
      }
    }
  }
  return new Map([...out].map(([prefix, v]) => [prefix, v.transformer]));
}

/**
 * The transformer of a custom resource's objects (`group` and `plural` from its CRD): the first
 * rule whose pattern names it (`*.*`, `*.<group>`, `<plural>.<group>`), as for a built-in one;
 * undefined when none does. CRDs come and go at run time, so the encrypting store asks this for
 * each custom storage prefix when it first sees a key under it.
 */
export function customTransformer(rules: readonly EncryptionRule[]): (group: string, plural: string) => ValueTransformer | undefined {
  return (group, plural) => rules.find((rule) => rule.resources.some((p) => matches(p, { group, plural, prefix: '' })))?.transformer;
}

function provider(p: unknown, at: string, errors: string[]): { entry: PrefixedTransformer; kind: string } | undefined {
  if (!isObject(p)) return void errors.push(`${at}: Invalid value: must be an object`);
  const kinds = Object.keys(p).filter((k) => (PROVIDERS as readonly string[]).includes(k));
  unknownFields(p, PROVIDERS, at, errors);
  if (kinds.length === 0) return void errors.push(`${at}: Invalid value: provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity`);
  if (kinds.length > 1) return void errors.push(`${at}: Invalid value: more than one provider specified in a single element, should split into different list elements`);
  const kind = kinds[0]!;
  if (kind === 'kms') return void errors.push(`${at}.kms: Unsupported value: the kms provider is not supported here (nodelet has no KMS plugin client); use aesgcm, aescbc or secretbox`);
  if (kind === 'identity') {
    if (!isObject(p.identity) && p.identity !== null) return void errors.push(`${at}.identity: Invalid value: must be an object ({})`);
    if (isObject(p.identity)) unknownFields(p.identity, [], `${at}.identity`, errors);
    return { entry: { prefix: '', transformer: identity }, kind };
  }
  const spec = KEYED[kind]!;
  const body = p[kind];
  const keysAt = `${at}.${kind}.keys`;
  if (!isObject(body)) return void errors.push(`${at}.${kind}: Invalid value: must be an object with keys`);
  unknownFields(body, ['keys'], `${at}.${kind}`, errors);
  const keys = Array.isArray(body.keys) ? body.keys : [];
  if (keys.length === 0) return void errors.push(`${keysAt}: Required value: at least one keys is required`);
  const perKey: PrefixedTransformer[] = [];
  keys.forEach((k, i) => {
    const kat = `${keysAt}[${i}]`;
    if (!isObject(k)) return void errors.push(`${kat}: Invalid value: must be an object with name and secret`);
    unknownFields(k, ['name', 'secret'], kat, errors);
    if (typeof k.name !== 'string' || k.name === '') errors.push(`${kat}.name: Required value: name is a mandatory field for a key`);
    if (typeof k.secret !== 'string' || k.secret === '') return void errors.push(`${kat}.secret: Required value: secret is a mandatory field for a key`);
    const secret = strictBase64(k.secret);
    if (!secret) return void errors.push(`${kat}.secret: Invalid value: "REDACTED": secrets must be base64 encoded`);
    if (!spec.sizes.includes(secret.length)) {
      return void errors.push(`${kat}.secret: Invalid value: "REDACTED": secret is not of the expected length, got ${secret.length}, expected one of [${spec.sizes.join(' ')}]`);
    }
    if (typeof k.name === 'string' && k.name) perKey.push({ prefix: `${k.name}:`, transformer: spec.make(secret) });
  });
  if (perKey.length !== keys.length) return undefined;
  return { entry: { prefix: spec.prefix, transformer: prefixChain(perKey, spec.noKey) }, kind };
}

/** `resource`, `resource.group`, `*.group`, `*.` or `*.*`, in lower case (upstream's forms). */
function resourcePatternError(n: string): string | undefined {
  if (n === '*') return 'use "*.*" for every resource, "*.<group>" for a group\'s, "*." for the core group\'s';
  if (n !== n.toLowerCase()) return 'resource names must be lower case';
  if (!/^(\*|[a-z0-9][a-z0-9-]*)(\.(\*|[a-z0-9][a-z0-9.-]*))?\.?$/.test(n)) return 'not a resource, resource.group, *.group, *. or *.*';
  if (n.startsWith('*.') === false && n.includes('*')) return 'a wildcard stands only for the resource (*.group) or for both (*.*)';
  return undefined;
}

function matches(pattern: string, r: StoredResource): boolean {
  const dot = pattern.indexOf('.');
  const resource = dot < 0 ? pattern : pattern.slice(0, dot);
  const group = dot < 0 ? '' : pattern.slice(dot + 1);
  return (resource === '*' || resource === r.plural) && (group === '*' || group === r.group);
}

const isWildcard = (pattern: string): boolean => pattern.startsWith('*');
const name = (r: StoredResource): string => (r.group ? `${r.plural}.${r.group}` : r.plural);

/** Go's base64.StdEncoding: padded, standard alphabet, nothing else (Node's decoder would skip junk). */
function strictBase64(s: string): Buffer | undefined {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return undefined;
  const b = Buffer.from(s, 'base64');
  return b.toString('base64') === s ? b : undefined;
}

function unknownFields(obj: Record<string, unknown>, allowed: readonly string[], at: string, errors: string[]): void {
  for (const k of Object.keys(obj)) {
    if (!allowed.includes(k)) errors.push(`${at ? `${at}.` : ''}${k}: Unsupported value: unknown field`);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function configError(path: string, message: string, cause?: unknown): AgentError {
  return new AgentError('ERR_INVALID_ARGUMENT', `--encryption-provider-config: error while parsing encryption provider configuration file "${path}": ${message}`, cause === undefined ? {} : { cause });
}
