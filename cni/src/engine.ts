import { stat } from 'node:fs/promises';
import { KeyedSerializer, noopLogger, type Logger } from '@nodelet/base';
import { ResultCache, DEFAULT_CACHE_DIR, type CachedAttachment } from './cache.js';
import { CniCode, CniError } from './errors.js';
import { RawPluginExecutor, type PluginExecutor } from './exec.js';
import { SharedExclusiveGate } from './gate.js';
import { parseNetworkConfig } from './conflist.js';
import { buildEnv, buildRequest, validateRuntimeConf, type Command, type PreparedPlugin } from './request.js';
import type { AttachmentKey, CniResult, NetworkConfigList, RuntimeConf, VersionInfo } from './types.js';
import { candidateVersions, convertResult, CURRENT_VERSION, negotiateVersion, parseResult, parseVersionReply, toCanonical, versionAtLeast } from './version.js';

export interface CniEngineOptions {
  /** Plugin directories, searched in order (CNI_PATH). */
  binDirs: readonly string[];
  /** Cache root; results go to `<cacheDir>/results` (libcni layout). Default /var/lib/cni. */
  cacheDir?: string;
  /** Per plugin invocation; the plugin's process group is killed after it. Default 60 s. */
  execTimeoutMs?: number;
  /** Deadline of the DEL that rolls back a failed ADD (its own, not the caller's). Default 60 s. */
  cleanupTimeoutMs?: number;
  executor?: PluginExecutor;
  logger?: Logger;
  /**
   * Plugins to leave out of CHECK for a given cached result. For known plugin bugs only, e.g.
   * portmap ≤ 1.2 failing CHECK on IPv4-only attachments (containernetworking/plugins#819).
   */
  skipCheck?: (pluginType: string, cached: CniResult) => boolean;
}

export interface OpOptions {
  signal?: AbortSignal;
}

export interface GcOptions extends OpOptions {
  /** Attachments the runtime still has; every other cached attachment of the network is deleted. */
  validAttachments: readonly AttachmentKey[];
}

export interface GcReport {
  deleted: AttachmentKey[];
  /** GC continues past failures (SPEC.md "Garbage-collecting a network") and reports them all. */
  errors: CniError[];
}

export interface PluginVersionReport {
  type: string;
  path: string;
  supportedVersions: string[];
  /** The version the engine will speak with it for this list. */
  negotiated: string;
}

export interface StatusReport {
  /** Plugins (≥ 1.1.0) that answered STATUS. */
  ready: string[];
  /** Plugins too old for STATUS; found and answering VERSION is all that can be said. */
  unchecked: string[];
}

/**
 * Runs network configuration lists against plugin binaries per the CNI spec, like libcni: ADD
 * forward with prevResult, DEL in reverse with the cached result, CHECK forward, STATUS, and GC
 * (libcni-style DEL of stale cached attachments, plus plugin GC for 1.1.0 plugins).
 *
 * Concurrency: operations on one attachment (network, container, ifname) never overlap; GC of a
 * network waits for, and holds off, every ADD/DEL/CHECK of that network. Every operation takes a
 * signal; aborting kills the running plugin. A failed (or aborted) ADD runs DEL of the whole chain
 * under its own deadline before the error is thrown, so nothing leaks.
 *
 *     add ──▶ VERSION per plugin (cached) ──▶ ADD p1 … pn ──▶ cache write ──▶ result
 *                                                 │ fails
 *                                                 ▼
 *                                          DEL pn … p1 (cleanup deadline) ──▶ throw
 */
export class CniEngine {
  readonly cache: ResultCache;
  readonly binDirs: readonly string[];
  readonly #exec: PluginExecutor;
  readonly #log: Logger;
  readonly #timeoutMs: number;
  readonly #cleanupMs: number;
  readonly #skipCheck: (pluginType: string, cached: CniResult) => boolean;
  readonly #attachments = new KeyedSerializer();
  readonly #networks = new SharedExclusiveGate();
  readonly #versions = new Map<string, { mtimeMs: number; info: VersionInfo }>();

  constructor(opts: CniEngineOptions) {
    this.binDirs = opts.binDirs;
    this.cache = new ResultCache(opts.cacheDir ?? DEFAULT_CACHE_DIR);
    this.#exec = opts.executor ?? new RawPluginExecutor();
    this.#log = opts.logger ?? noopLogger;
    this.#timeoutMs = opts.execTimeoutMs ?? 60_000;
    this.#cleanupMs = opts.cleanupTimeoutMs ?? 60_000;
    this.#skipCheck = opts.skipCheck ?? (() => false);
  }

  /** Adds the attachment; returns the final result (canonical, cniVersion = the list's highest version). */
  async add(list: NetworkConfigList, rt: RuntimeConf, opts: OpOptions = {}): Promise<CniResult> {
    validateRuntimeConf(rt, 'ADD');
    return this.#serial(list, rt, async () => {
      const plugins = await this.#prepare(list, opts.signal);
      const version = listVersion(list);
      let prev: CniResult | undefined;
      try {
        for (const p of plugins) prev = parseResult(p.conf.type, await this.#run(p, 'ADD', list, rt, prev, opts.signal), p.version);
        const result: CniResult = { ...prev!, cniVersion: version };
        await this.cache.write(list.name, rt, list.bytes, convertResult(result, version));
        return result;
      } catch (err) {
        throw await this.#rollback(list, plugins, rt, prev, err);
      }
    });
  }

  /**
   * Deletes the attachment: plugins in reverse, each given the cached ADD result. Idempotent and
   * tolerant of a missing netns or cache entry (containerd sends DEL twice). Removes the cache
   * entry on success.
   */
  async del(list: NetworkConfigList, rt: RuntimeConf, opts: OpOptions = {}): Promise<void> {
    validateRuntimeConf(rt, 'DEL');
    return this.#serial(list, rt, () => this.#delLocked(list, rt, opts.signal));
  }

  /** Verifies the attachment against the cached result; throws the first plugin's complaint. */
  async check(list: NetworkConfigList, rt: RuntimeConf, opts: OpOptions = {}): Promise<void> {
    validateRuntimeConf(rt, 'CHECK');
    return this.#serial(list, rt, async () => {
      const version = listVersion(list);
      if (!versionAtLeast(version, '0.4.0')) {
        throw new CniError({ cniCode: CniCode.IncompatibleVersion, msg: 'CHECK is not supported', details: `network "${list.name}" is cniVersion ${version}; CHECK needs 0.4.0 or later` });
      }
      if (list.disableCheck) return;
      const cached = await this.cache.read(list.name, rt.containerID, rt.ifName);
      if (!cached?.result) {
        throw new CniError({ cniCode: CniCode.Internal, msg: 'no cached result for attachment', details: `${list.name}/${rt.containerID}/${rt.ifName}: CHECK needs a successful ADD first`, code: 'ERR_NOT_FOUND' });
      }
      const prev = toCanonical(cached.result, version);
      for (const p of await this.#prepare(list, opts.signal)) {
        if (!versionAtLeast(p.version, '0.4.0') || this.#skipCheck(p.conf.type, prev)) continue;
        await this.#run(p, 'CHECK', list, rt, prev, opts.signal);
      }
    });
  }

  /**
   * Garbage-collects a network the way libcni's GCNetworkList does: DEL every cached attachment
   * not in `validAttachments` (with the configuration it was added with), then GC on every
   * plugin that speaks 1.1.0. Exclusive with other operations on the network.
   */
  gc(list: NetworkConfigList, opts: GcOptions): Promise<GcReport> {
    return this.#networks.exclusive(list.name, async () => {
      const valid = new Set(opts.validAttachments.map((a) => `${a.containerID}\0${a.ifName}`));
      const report: GcReport = { deleted: [], errors: [] };
      for (const a of await this.cache.list(list.name)) {
        if (valid.has(`${a.containerID}\0${a.ifName}`)) continue;
        try {
          await this.#attachments.run(attachmentKey(list.name, a), () => this.#delLocked(configOf(a, list), runtimeOf(a), opts.signal));
          report.deleted.push({ containerID: a.containerID, ifName: a.ifName });
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          report.errors.push(asCniError(err));
        }
      }
      if (list.disableGC) return report;
      const plugins = await this.#prepare(list, opts.signal);
      const attachments = opts.validAttachments.map((a) => ({ containerID: a.containerID, ifname: a.ifName }));
      for (const p of plugins) {
        if (!versionAtLeast(p.version, '1.1.0')) continue;
        try {
          await this.#run(p, 'GC', list, { containerID: '', ifName: '' }, undefined, opts.signal, { 'cni.dev/valid-attachments': attachments, 'cni.dev/attachments': attachments });
        } catch (err) {
          if (opts.signal?.aborted) throw err;
          report.errors.push(asCniError(err));
        }
      }
      return report;
    });
  }

  /** STATUS on every 1.1.0 plugin, stopping at the first error; older plugins are only located and versioned. */
  async status(list: NetworkConfigList, opts: OpOptions = {}): Promise<StatusReport> {
    const report: StatusReport = { ready: [], unchecked: [] };
    for (const p of await this.#prepare(list, opts.signal)) {
      if (!versionAtLeast(p.version, '1.1.0')) {
        report.unchecked.push(p.conf.type);
        continue;
      }
      await this.#run(p, 'STATUS', list, { containerID: '', ifName: '' }, undefined, opts.signal);
      report.ready.push(p.conf.type);
    }
    return report;
  }

  /** Each plugin's VERSION answer and the version negotiated for this list. */
  async versions(list: NetworkConfigList, opts: OpOptions = {}): Promise<PluginVersionReport[]> {
    const out: PluginVersionReport[] = [];
    for (const p of await this.#prepare(list, opts.signal)) {
      const info = await this.#versionOf(p.conf.type, p.path, opts.signal);
      out.push({ type: p.conf.type, path: p.path, supportedVersions: info.supportedVersions, negotiated: p.version });
    }
    return out;
  }

  /** One plugin binary's VERSION answer (cached per binary until it changes on disk). */
  async pluginVersion(type: string, opts: OpOptions = {}): Promise<VersionInfo> {
    return this.#versionOf(type, await this.#exec.findPlugin(type, this.binDirs), opts.signal);
  }

  cachedAttachments(network?: string): Promise<CachedAttachment[]> {
    return this.cache.list(network);
  }

  /** Number of attachments with queued or running work (tests check it drains to zero). */
  get pending(): number {
    return this.#attachments.size + this.#networks.size;
  }

  async #delLocked(list: NetworkConfigList, rt: RuntimeConf, signal?: AbortSignal): Promise<void> {
    const version = listVersion(list);
    const cached = await this.cache.read(list.name, rt.containerID, rt.ifName);
    let prev: CniResult | undefined;
    try {
      prev = cached?.result ? toCanonical(cached.result, version) : undefined;
    } catch {
      prev = undefined; // an unreadable cached result gives no prevResult, as in libcni
    }
    for (const p of [...(await this.#prepare(list, signal))].reverse()) {
      await this.#run(p, 'DEL', list, rt, versionAtLeast(p.version, '0.4.0') ? prev : undefined, signal);
    }
    await this.cache.remove(list.name, rt.containerID, rt.ifName);
  }

  async #rollback(list: NetworkConfigList, plugins: PreparedPlugin[], rt: RuntimeConf, partial: CniResult | undefined, err: unknown): Promise<unknown> {
    const signal = AbortSignal.timeout(this.#cleanupMs);
    const failures: string[] = [];
    for (const p of [...plugins].reverse()) {
      try {
        await this.#run(p, 'DEL', list, rt, versionAtLeast(p.version, '0.4.0') ? partial : undefined, signal);
      } catch (delErr) {
        failures.push(asCniError(delErr).message);
      }
    }
    await this.cache.remove(list.name, rt.containerID, rt.ifName).catch(() => undefined); // as libcni: a stale cache entry is harmless, the DEL result above is what counts
    if (failures.length === 0) return err;
    this.#log.warn({ network: list.name, containerID: rt.containerID, failures }, 'Rollback DEL after failed ADD did not complete');
    if (!(err instanceof CniError)) return err;
    return new CniError({
      cniCode: err.cniCode,
      msg: err.msg,
      details: `${err.details ? `${err.details}; ` : ''}cleanup DEL also failed (${failures.join('; ')}); retry DEL`,
      plugin: err.plugin,
      code: err.code,
      retryable: err.retryable,
      cause: err,
    });
  }

  #serial<T>(list: NetworkConfigList, rt: RuntimeConf, task: () => Promise<T>): Promise<T> {
    return this.#networks.shared(list.name, () => this.#attachments.run(attachmentKey(list.name, rt), task));
  }

  /** Locates every plugin and negotiates its version before anything runs (so a missing plugin fails cleanly). */
  async #prepare(list: NetworkConfigList, signal?: AbortSignal): Promise<PreparedPlugin[]> {
    const candidates = candidateVersions(list);
    const out: PreparedPlugin[] = [];
    for (const conf of list.plugins) {
      const path = await this.#exec.findPlugin(conf.type, this.binDirs);
      const info = await this.#versionOf(conf.type, path, signal);
      out.push({ conf, path, version: negotiateVersion(conf.type, candidates, info) });
    }
    return out;
  }

  async #versionOf(type: string, path: string, signal?: AbortSignal): Promise<VersionInfo> {
    const mtimeMs = await stat(path).then((s) => s.mtimeMs, () => -1);
    const hit = this.#versions.get(path);
    if (hit && hit.mtimeMs === mtimeMs) return hit.info;
    const env = { CNI_COMMAND: 'VERSION', CNI_CONTAINERID: '', CNI_NETNS: 'dummy', CNI_IFNAME: 'dummy', CNI_PATH: 'dummy', CNI_ARGS: '' };
    let info: VersionInfo;
    try {
      const out = await this.#exec.execPlugin({ plugin: type, path, env, stdin: Buffer.from(JSON.stringify({ cniVersion: CURRENT_VERSION })), signal, timeoutMs: this.#timeoutMs });
      info = parseVersionReply(type, out);
    } catch (err) {
      // Plugins older than VERSION answer "unknown CNI_COMMAND: VERSION" (libcni GetVersionInfo).
      if (err instanceof CniError && /unknown CNI_COMMAND: VERSION/.test(err.message)) info = { cniVersion: '0.1.0', supportedVersions: ['0.1.0'] };
      else throw err;
    }
    this.#versions.set(path, { mtimeMs, info });
    return info;
  }

  async #run(p: PreparedPlugin, command: Command, list: NetworkConfigList, rt: RuntimeConf, prev: CniResult | undefined, signal?: AbortSignal, extra?: Record<string, unknown>): Promise<string> {
    const started = performance.now();
    const stdin = buildRequest(list, p, rt, prev, extra);
    try {
      return await this.#exec.execPlugin({ plugin: p.conf.type, path: p.path, env: buildEnv(command, rt, this.binDirs), stdin, signal, timeoutMs: this.#timeoutMs });
    } finally {
      this.#log.debug({ network: list.name, plugin: p.conf.type, command, containerID: rt.containerID, ms: Math.round(performance.now() - started) }, 'CNI plugin ran');
    }
  }
}

function listVersion(list: NetworkConfigList): string {
  return candidateVersions(list)[0]!;
}

function attachmentKey(network: string, a: { containerID: string; ifName: string }): string {
  return `${network}\0${a.containerID}\0${a.ifName}`;
}

function asCniError(err: unknown): CniError {
  if (err instanceof CniError) return err;
  return new CniError({ cniCode: CniCode.Internal, msg: err instanceof Error ? err.message : String(err), cause: err });
}

/** The configuration a cached attachment was added with (falls back to the current one). */
function configOf(a: CachedAttachment, current: NetworkConfigList): NetworkConfigList {
  if (!a.config) return current;
  try {
    return parseNetworkConfig(a.config, a.file);
  } catch {
    return current;
  }
}

function runtimeOf(a: CachedAttachment): RuntimeConf {
  const rt: RuntimeConf = { containerID: a.containerID, ifName: a.ifName };
  if (a.netns) rt.netns = a.netns;
  if (a.cniArgs) rt.args = a.cniArgs;
  if (a.capabilityArgs) rt.capabilityArgs = a.capabilityArgs;
  return rt;
}

