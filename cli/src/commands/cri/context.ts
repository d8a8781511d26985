/**
 * What every `nodelet cri` subcommand shares: crictl's endpoint selection, the client, and -o output.
 *
 * Endpoint (crictl's order): -r/--runtime-endpoint or CONTAINER_RUNTIME_ENDPOINT → `runtime-endpoint`
 * in the config file (-c/--config, CRI_CONFIG_FILE, /etc/crictl.yaml) → the first default socket
 * that exists (containerd, CRI-O, cri-dockerd, then nodelet's lab containerd). The image endpoint
 * is -i/--image-endpoint or IMAGE_SERVICE_ENDPOINT → `image-endpoint` → the runtime endpoint.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { Command } from 'commander';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { AgentError, parseDuration } from '@nodelet/base';
import { createCriClient, type CriClient } from '@nodelet/cri-client';
import { containerdPaths, DEFAULT_LAB_RUNTIME_DIR } from '@nodelet/lab-runtime';
import { toJson, pruneDefaults } from './format.js';

export const DEFAULT_CONFIG_FILE = '/etc/crictl.yaml';

export const DEFAULT_ENDPOINTS = [
  'unix:///run/containerd/containerd.sock',
  'unix:///run/crio/crio.sock',
  'unix:///var/run/cri-dockerd.sock',
  `unix://${containerdPaths(DEFAULT_LAB_RUNTIME_DIR).socket}`,
];

export interface GlobalOptions {
  runtimeEndpoint?: string;
  imageEndpoint?: string;
  config?: string;
  timeout?: string;
  debug?: boolean;
}

export interface ResolvedEndpoints {
  runtime: string;
  image: string;
  timeoutMs: number;
  /** Where the runtime endpoint came from, for --debug and error messages. */
  source: string;
  /** -D/--debug, or `debug: true` in the config file. */
  debug: boolean;
}

/** The keys of crictl's config file that nodelet cri reads (and `nodelet cri config` writes). */
export interface CrictlConfig {
  'runtime-endpoint'?: string;
  'image-endpoint'?: string;
  timeout?: number;
  debug?: boolean;
}

/** Reads the crictl config file; a missing default file is fine, a missing explicit one is not. */
export function readCrictlConfig(path: string, explicit: boolean, read: (p: string) => string = (p) => readFileSync(p, 'utf8')): CrictlConfig {
  let text: string;
  try {
    text = read(path);
  } catch (err) {
    if (!explicit && (err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new AgentError('ERR_INVALID_ARGUMENT', `cannot read config file ${path}: ${(err as Error).message}`, { cause: err });
  }
  const doc = (parseYaml(text) ?? {}) as unknown;
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new AgentError('ERR_INVALID_ARGUMENT', `config file ${path} is not a YAML mapping`);
  return doc as CrictlConfig;
}

export function resolveEndpoints(
  o: GlobalOptions,
  env: NodeJS.ProcessEnv = process.env,
  deps: { read?: (p: string) => string; exists?: (p: string) => boolean } = {},
): ResolvedEndpoints {
  const { path: configPath, explicit } = configPathOf(o, env);
  const cfg = readCrictlConfig(configPath, explicit, deps.read);
  const exists = deps.exists ?? existsSync;
  let runtime = o.runtimeEndpoint ?? env['CONTAINER_RUNTIME_ENDPOINT'];
  let source = o.runtimeEndpoint ? '--runtime-endpoint' : runtime ? 'CONTAINER_RUNTIME_ENDPOINT' : '';
  if (!runtime && cfg['runtime-endpoint']) {
    runtime = cfg['runtime-endpoint'];
    source = configPath;
  }
  if (!runtime) {
    runtime = DEFAULT_ENDPOINTS.find((e) => exists(e.replace(/^unix:\/\//, '')));
    source = 'default endpoints';
    if (!runtime) {
      throw new AgentError(
        'ERR_UNAVAILABLE',
        `no container runtime found: none of ${DEFAULT_ENDPOINTS.join(', ')} exists; ` +
          'start one (nodelet runtime up) or name it with -r/--runtime-endpoint, CONTAINER_RUNTIME_ENDPOINT or runtime-endpoint in /etc/crictl.yaml',
      );
    }
  }
  const image = o.imageEndpoint ?? env['IMAGE_SERVICE_ENDPOINT'] ?? cfg['image-endpoint'] ?? runtime;
  const timeoutMs = o.timeout ? parseDuration(o.timeout, { bare: 'seconds' }) : cfg.timeout ? cfg.timeout * 1000 : 2_000;
  return { runtime, image, timeoutMs, source, debug: Boolean(o.debug ?? cfg.debug) };
}

/** The config file crictl would use: -c/--config, then CRI_CONFIG_FILE, then /etc/crictl.yaml. */
export function configPathOf(o: GlobalOptions, env: NodeJS.ProcessEnv = process.env): { path: string; explicit: boolean } {
  const given = o.config ?? env['CRI_CONFIG_FILE'];
  return { path: given ?? DEFAULT_CONFIG_FILE, explicit: given !== undefined };
}

export interface Clients {
  runtime: CriClient;
  image: CriClient;
  endpoints: ResolvedEndpoints;
}

/** The global options of `nodelet cri`, wherever the subcommand is. */
export function globalsOf(cmd: Command): GlobalOptions {
  let c: Command | null = cmd;
  while (c && c.name() !== 'cri') c = c.parent;
  return (c ?? cmd).opts<GlobalOptions>();
}

/** Runs `fn` with clients for the selected endpoints and closes them afterwards. */
export async function withClients<T>(cmd: Command, fn: (c: Clients) => Promise<T>, extra: { pullTimeoutMs?: number } = {}): Promise<T> {
  const endpoints = resolveEndpoints(globalsOf(cmd));
  if (endpoints.debug) io.stderr.write(`using runtime endpoint ${endpoints.runtime} (from ${endpoints.source}), image endpoint ${endpoints.image}\n`);
  const runtime = createCriClient({ endpoint: endpoints.runtime, timeoutMs: endpoints.timeoutMs, pullTimeoutMs: extra.pullTimeoutMs });
  const image = endpoints.image === endpoints.runtime ? runtime : createCriClient({ endpoint: endpoints.image, timeoutMs: endpoints.timeoutMs, pullTimeoutMs: extra.pullTimeoutMs });
  try {
    return await fn({ runtime, image, endpoints });
  } finally {
    runtime.close();
    image.close();
  }
}

export type OutputFormat = 'json' | 'yaml' | 'table';

export function parseOutput<F extends OutputFormat = OutputFormat>(v: string | undefined, allowed: F[] = ['json', 'yaml', 'table'] as F[]): F {
  const f = (v ?? 'table') as F;
  if (!allowed.includes(f)) throw new AgentError('ERR_INVALID_ARGUMENT', `unsupported output format "${v}": use ${allowed.join(', ')}`);
  return f;
}

/** Prints a reply as protojson-like JSON or YAML. */
export function printStructured(value: unknown, format: 'json' | 'yaml'): void {
  io.stdout.write(format === 'json' ? toJson(value) : toYaml(pruneDefaults(value)));
}

/** `--label k=v` values → a label selector. */
export function parseLabels(values: string[] | undefined): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const out: Record<string, string> = {};
  for (const kv of values) {
    const i = kv.indexOf('=');
    if (i <= 0) throw new AgentError('ERR_INVALID_ARGUMENT', `invalid label "${kv}": use key=value`);
    out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

export const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

/**
 * Where the commands write. The process streams, except in tests, which swap in buffers
 * (`withIo`) instead of patching process.stdout (the test runner reports through it).
 */
export const io: { stdout: Writable; stderr: Writable } = { stdout: process.stdout, stderr: process.stderr };

export const out = (s: string): void => void io.stdout.write(s);

/**
 * The action of a command that acts on several IDs in turn (`start a b c`): `act` runs for each,
 * in order, and what it returns is printed; the first failure stops the rest, as in crictl.
 */
export function forEachId<O>(act: (c: Clients, id: string, o: O) => Promise<string>): (ids: string[], o: O, cmd: Command) => Promise<void> {
  return (ids, o, cmd) =>
    withClients(cmd, async (c) => {
      for (const id of ids) out(await act(c, id, o));
    });
}
