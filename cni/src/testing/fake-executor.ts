import type { ExecRequest, PluginExecutor } from '../exec.js';
import { CniCode, CniError } from '../errors.js';

export interface RecordedExec {
  plugin: string;
  command: string;
  env: Record<string, string>;
  request: Record<string, unknown>;
}

/** Answers one plugin call: return stdout, or throw (e.g. a CniError). */
export type FakePluginHandler = (call: RecordedExec, req: ExecRequest) => string | Promise<string>;

/**
 * An in-memory PluginExecutor for unit tests of the engine and the service: plugins are
 * handlers keyed by type; every call is recorded. VERSION answers `versions` unless a handler
 * takes it. ADD without a handler passes prevResult through.
 */
export class FakePluginExecutor implements PluginExecutor {
  readonly calls: RecordedExec[] = [];
  readonly #plugins = new Map<string, FakePluginHandler | undefined>();
  versions: string[] = ['0.3.0', '0.3.1', '0.4.0', '1.0.0'];

  /** Registers plugin `type` (handler optional). */
  plugin(type: string, handler?: FakePluginHandler): this {
    this.#plugins.set(type, handler);
    return this;
  }

  callsOf(command: string): RecordedExec[] {
    return this.calls.filter((c) => c.command === command);
  }

  async findPlugin(type: string, dirs: readonly string[]): Promise<string> {
    if (!this.#plugins.has(type)) throw new CniError({ cniCode: CniCode.Internal, msg: 'failed to find plugin', details: `no "${type}" in [${dirs.join(', ')}]`, plugin: type, code: 'ERR_FAILED_PRECONDITION' });
    return `/fake/${type}`;
  }

  async execPlugin(req: ExecRequest): Promise<string> {
    const call: RecordedExec = { plugin: req.plugin, command: req.env.CNI_COMMAND ?? '', env: req.env, request: JSON.parse(req.stdin.toString('utf8')) as Record<string, unknown> };
    this.calls.push(call);
    const h = this.#plugins.get(req.plugin);
    if (h) return h(call, req);
    if (call.command === 'VERSION') return JSON.stringify({ cniVersion: this.versions.at(-1), supportedVersions: this.versions });
    if (call.command === 'ADD') return JSON.stringify(call.request.prevResult ?? { cniVersion: call.request.cniVersion, interfaces: [], ips: [] });
    return '';
  }
}
