/**
 * `nodelet cri config`: show and set the keys of crictl's config file that `nodelet cri` reads
 * (the file is -c/--config, CRI_CONFIG_FILE or /etc/crictl.yaml, the same one crictl uses). As crictl:
 * `config --list`, `config --get <key>`, `config --set key=value[,key=value]`, `config <key> <value>`.
 * Other keys already in the file (crictl's pull settings) and its comments are kept as they are.
 */
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { parseDocument } from 'yaml';
import { AgentError } from '@nodelet/base';
import { configPathOf, globalsOf, out, type CrictlConfig } from './context.js';

export const CONFIG_KEYS = ['runtime-endpoint', 'image-endpoint', 'timeout', 'debug'] as const;
type Key = (typeof CONFIG_KEYS)[number];

function checkKey(key: string): Key {
  if (!(CONFIG_KEYS as readonly string[]).includes(key)) {
    throw new AgentError('ERR_INVALID_ARGUMENT', `unknown config key "${key}": use ${CONFIG_KEYS.join(', ')}`);
  }
  return key as Key;
}

/** A value as the file stores it: endpoints as strings, timeout as whole seconds, debug as a boolean. */
export function configValue(key: string, value: string): { key: Key; value: string | number | boolean } {
  const k = checkKey(key);
  if (k === 'timeout') {
    if (!/^\d+$/.test(value)) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid timeout "${value}": use whole seconds`);
    return { key: k, value: Number(value) };
  }
  if (k === 'debug') {
    if (value !== 'true' && value !== 'false') throw new AgentError('ERR_INVALID_ARGUMENT', `invalid debug "${value}": use true or false`);
    return { key: k, value: value === 'true' };
  }
  if (!value) throw new AgentError('ERR_INVALID_ARGUMENT', `${k} may not be empty`);
  return { key: k, value };
}

async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read config file ${path}: ${(err as Error).message}`, { cause: err });
  }
}

function parse(path: string, text: string): ReturnType<typeof parseDocument> {
  const doc = parseDocument(text);
  if (doc.errors.length) throw new AgentError('ERR_INVALID_ARGUMENT', `config file ${path} is not valid YAML: ${doc.errors[0]!.message}`);
  const v = doc.toJS() as unknown;
  if (v !== null && v !== undefined && (typeof v !== 'object' || Array.isArray(v))) throw new AgentError('ERR_INVALID_ARGUMENT', `config file ${path} is not a YAML mapping`);
  return doc;
}

/** Applies `key=value` settings to the file's text; returns the new text. */
export function setConfig(path: string, text: string, settings: Array<[string, string]>): string {
  const doc = parse(path, text);
  for (const [k, v] of settings) {
    const { key, value } = configValue(k, v);
    doc.set(key, value);
  }
  return doc.toString();
}

function splitSettings(list: string): Array<[string, string]> {
  return list.split(',').map((kv) => {
    const i = kv.indexOf('=');
    if (i <= 0) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid setting "${kv}": use key=value`);
    return [kv.slice(0, i), kv.slice(i + 1)];
  });
}

export function registerConfig(cri: Command): void {
  cri
    .command('config')
    .description(`show or set ${CONFIG_KEYS.join(', ')} in crictl's config file (-c, CRI_CONFIG_FILE or /etc/crictl.yaml)`)
    .argument('[key]')
    .argument('[value]')
    .option('--get <key>', 'print the value of one key')
    .option('--set <key=value,...>', 'set one or more keys')
    .option('-l, --list', 'print every key and its value')
    .action(async (key: string | undefined, value: string | undefined, o: { get?: string; set?: string; list?: boolean }, cmd: Command) => {
      const { path } = configPathOf(globalsOf(cmd));
      const text = await readText(path);
      const current = (parse(path, text).toJS() ?? {}) as CrictlConfig;
      if (o.list) {
        const rows = CONFIG_KEYS.map((k) => [k, current[k] === undefined ? '' : String(current[k])]);
        const w = Math.max(...rows.map((r) => r[0]!.length), 3) + 4;
        return out(`${'KEY'.padEnd(w)}VALUE\n${rows.map(([k, v]) => `${k!.padEnd(w)}${v}`.trimEnd() + '\n').join('')}`);
      }
      if (o.get) {
        const k = checkKey(o.get);
        return out(current[k] === undefined ? '\n' : `${String(current[k])}\n`);
      }
      let settings: Array<[string, string]>;
      if (o.set) settings = splitSettings(o.set);
      else if (key !== undefined && value !== undefined) settings = [[key, value]];
      else throw new AgentError('ERR_INVALID_ARGUMENT', 'give --list, --get <key>, --set <key=value>, or <key> <value>');
      const next = setConfig(path, text, settings);
      // Written whole and renamed, so crictl or a running `nodelet cri` never reads half a file.
      const tmp = `${path}.${process.pid}.tmp`;
      await writeFile(tmp, next, { mode: 0o644 });
      await rename(tmp, path);
    });
}
