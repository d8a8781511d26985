import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { chmod, lstat, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { AgentError, describeError, noopLogger, type Logger } from '@nodelet/base';
import { CniEngine, type GcReport, type OpOptions } from '../engine.js';
import { parseNetworkConfig } from '../conflist.js';
import { CniCode, CniError, toSpecError } from '../errors.js';
import type { PluginExecutor } from '../exec.js';
import { parseCniArgs } from '../request.js';
import type { AttachmentKey, NetworkConfigList, RuntimeConf } from '../types.js';
import { convertResult, isSupportedVersion } from '../version.js';
import { buildNodeChain, DEFAULT_CHAIN_NAME, skipKnownBrokenCheck, type NodeChainOptions } from './chain.js';
import { normaliseCapabilityArgs } from './capabilities.js';
import { MAX_REQUEST_BYTES, SHIM_PATH, type ShimRequest, type ShimResponse } from './protocol.js';
import { writeRuntimeConflist } from './runtime-files.js';

export interface CniServiceOptions {
  socketPath: string;
  /** Where the real plugins live (CNI_PATH of the chain), e.g. ['/usr/lib/cni', '/opt/cni/bin']. */
  binDirs: readonly string[];
  /** libcni cache root (results in `<cacheDir>/results`). Default /var/lib/cni. */
  cacheDir?: string;
  chain: NodeChainOptions;
  /** If set, the runtime-facing conflist is written here once the socket listens. */
  runtimeConfDir?: string;
  /**
   * If set, the node chain is also written here (`10-<name>.conflist`) whenever it changes, so
   * `nodelet cni --conf-dir <dir> check|ls …` can inspect the node's pods by hand.
   */
  chainConfDir?: string;
  execTimeoutMs?: number;
  executor?: PluginExecutor;
  logger?: Logger;
  /**
   * Told about each ADD when it finished (epoch ms; `podUid` from CNI_ARGS K8S_POD_UID when the
   * runtime passed it), for the agent's pod journey spans. Must not throw.
   */
  onAdd?(add: { podUid?: string; startMs: number; endMs: number; error?: unknown }): void;
}

export interface CniService {
  readonly engine: CniEngine;
  readonly socketPath: string;
  /** The chain ADD uses now; undefined until the pod CIDR is known. */
  network(): NetworkConfigList | undefined;
  /**
   * Sets the node's pod CIDR (from Node.spec.podCIDR); new ADDs use it at once, existing
   * attachments keep the config they were added with. Synchronous; throws ERR_INVALID_ARGUMENT
   * (and keeps the old chain) for a malformed CIDR. chainConfDir is rewritten in the background.
   */
  setPodCIDR(cidr: string): void;
  /**
   * CHECK of one attachment with the config it was added with (for the agent's periodic check).
   * Throws the first plugin's complaint as a CniError; ERR_NOT_FOUND when nothing is cached.
   */
  check(attachment: { containerID: string; ifName: string; netns: string }, opts?: OpOptions): Promise<void>;
  /**
   * GC of the node chain: DEL of every cached attachment not in `validAttachments` (the sandboxes
   * the runtime still has), then plugin GC for 1.1.0 plugins. Exclusive with ADD/DEL.
   */
  gc(validAttachments: readonly AttachmentKey[], opts?: OpOptions): Promise<GcReport>;
  /** Stops accepting requests, waits for in-flight ones, removes the socket. Idempotent. */
  close(): Promise<void>;
}

/**
 * The agent side of nodelet-cni (docs/architecture.md, decision 1): listens on a unix socket (mode
 * 0600), runs the node's real chain with the engine, and answers in the runtime's cniVersion.
 * Started by the agent; runnable on its own in tests.
 *
 *   containerd ─exec─▶ nodelet-cni ─HTTP/unix─▶ CniService ─▶ CniEngine ─exec─▶ bridge, host-local, portmap
 *
 * DEL and CHECK use the configuration cached with the attachment (the chain may have changed
 * since, e.g. a new pod CIDR); DEL without cache or netns still runs the chain so host-side
 * state (IPAM, iptables) is released, and it is idempotent.
 */
export async function startCniService(opts: CniServiceOptions): Promise<CniService> {
  const log = (opts.logger ?? noopLogger).child({ component: 'cni-service' });
  const engine = new CniEngine({
    binDirs: opts.binDirs,
    cacheDir: opts.cacheDir,
    execTimeoutMs: opts.execTimeoutMs,
    executor: opts.executor,
    logger: log,
    skipCheck: skipKnownBrokenCheck,
  });
  let chainOpts = { ...opts.chain };
  let current = chainOpts.podCIDR ? buildNodeChain({ ...chainOpts, podCIDR: chainOpts.podCIDR }) : undefined;

  /**
   * The config an attachment was added with (DEL/CHECK must use it), else the current chain.
   * `corrupt` says why a cached config could not be used: the caller decides what that means.
   */
  async function listFor(a: { containerID: string; ifName: string }): Promise<{ list: NetworkConfigList | undefined; corrupt?: { file: string; err: unknown } }> {
    const cached = await engine.cache.read(chainOpts.name ?? DEFAULT_CHAIN_NAME, a.containerID, a.ifName);
    if (cached?.config) {
      try {
        return { list: parseNetworkConfig(cached.config, cached.file) };
      } catch (err) {
        return { list: current, corrupt: { file: cached.file, err } };
      }
    }
    return { list: current };
  }

  /**
   * DEL must succeed eventually or the runtime can never remove the sandbox, so a corrupt cached
   * config does not stop it: the current chain releases what it can by container ID. What the
   * attachment was added with is unknown, so a human is told where to look for leftovers.
   */
  async function listForDel(rt: RuntimeConf): Promise<NetworkConfigList | undefined> {
    const { list, corrupt } = await listFor(rt);
    if (corrupt) {
      log.error(
        { containerID: rt.containerID, ifName: rt.ifName, file: corrupt.file, err: describeError(corrupt.err), fix: 'run "nodelet doctor --leaks" to list IPs, veths and namespaces the attachment may have left' },
        'Cached network configuration is corrupt; deleting with the current chain',
      );
    }
    return list;
  }

  /** CHECK against a chain the attachment was not added with would judge the wrong thing: refuse. */
  async function listForCheck(a: { containerID: string; ifName: string }): Promise<NetworkConfigList> {
    const { list, corrupt } = await listFor(a);
    if (corrupt) {
      throw new CniError({
        cniCode: CniCode.InvalidNetworkConfig,
        msg: 'cached network configuration is corrupt',
        details: `${corrupt.file}: ${describeError(corrupt.err)}; the attachment cannot be checked: delete and re-create the pod's sandbox to attach it afresh`,
      });
    }
    if (!list) throw notReady();
    return list;
  }

  async function gc(validAttachments: readonly AttachmentKey[], signal?: AbortSignal): Promise<GcReport> {
    if (!current) return { deleted: [], errors: [] }; // no chain yet: nothing was added by this node
    return engine.gc(current, { validAttachments, signal });
  }

  async function handle(req: ShimRequest, signal: AbortSignal): Promise<Record<string, unknown> | undefined> {
    const env = req.env ?? {};
    const command = env.CNI_COMMAND ?? '';
    const want = typeof req.config?.cniVersion === 'string' ? req.config.cniVersion : '1.0.0';
    if (!isSupportedVersion(want)) throw new CniError({ cniCode: CniCode.IncompatibleVersion, msg: 'incompatible CNI versions', details: `runtime config is "${want}"` });
    const rt: RuntimeConf = {
      containerID: env.CNI_CONTAINERID ?? '',
      ifName: env.CNI_IFNAME ?? '',
      args: parseCniArgs(env.CNI_ARGS),
      capabilityArgs: normaliseCapabilityArgs(req.config.runtimeConfig as Record<string, unknown> | undefined),
    };
    if (env.CNI_NETNS) rt.netns = env.CNI_NETNS;
    switch (command) {
      case 'ADD': {
        const list = requireChain();
        if (!opts.onAdd) return convertResult(await engine.add(list, rt, { signal }), want);
        const podUid = rt.args?.find(([k]) => k === 'K8S_POD_UID')?.[1];
        const startMs = Date.now();
        try {
          const result = await engine.add(list, rt, { signal });
          opts.onAdd({ podUid, startMs, endMs: Date.now() });
          return convertResult(result, want);
        } catch (err) {
          opts.onAdd({ podUid, startMs, endMs: Date.now(), error: err });
          throw err;
        }
      }
      case 'DEL': {
        const list = await listForDel(rt);
        if (list) await engine.del(list, rt, { signal });
        return undefined;
      }
      case 'CHECK': {
        await engine.check(await listForCheck(rt), rt, { signal });
        return undefined;
      }
      case 'STATUS': {
        if (!current) throw new CniError({ cniCode: CniCode.PluginNotAvailable, msg: 'plugin not available', details: 'the node has no pod CIDR yet' });
        await engine.status(current, { signal });
        return undefined;
      }
      case 'GC': {
        const valid = (req.config['cni.dev/valid-attachments'] as Array<{ containerID: string; ifname: string }> | undefined) ?? [];
        const keys: AttachmentKey[] = valid.map((a) => ({ containerID: a.containerID, ifName: a.ifname }));
        const report = await gc(keys, signal);
        if (report.errors.length === 1) throw report.errors[0];
        if (report.errors.length > 1) throw new CniError({ cniCode: report.errors[0]!.cniCode, msg: 'garbage collection failed', details: report.errors.map((e) => e.message).join('; ') });
        return undefined;
      }
      default:
        throw new CniError({ cniCode: CniCode.InvalidEnvironment, msg: `unknown CNI_COMMAND: ${command}` });
    }
  }

  function notReady(): CniError {
    return new CniError({ cniCode: CniCode.TryAgainLater, msg: 'try again later', details: 'the node has no pod CIDR yet; the nodelet agent sets it once the node is registered' });
  }
  function requireChain(): NetworkConfigList {
    if (!current) throw notReady();
    return current;
  }

  const server = createServer((req, res) => void serve(req, res));
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && req.url === '/healthz') return void res.end('ok');
    if (req.method !== 'POST' || req.url !== SHIM_PATH) {
      res.statusCode = 404;
      return void res.end();
    }
    // The shim is killed when the runtime gives up: stop the plugin run (the engine rolls back).
    const ac = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) ac.abort(new AgentError('ERR_UNAVAILABLE', 'nodelet-cni went away'));
    });
    let answer: ShimResponse;
    let command = '';
    let version: string | undefined;
    const started = performance.now();
    try {
      const body = await readBody(req);
      const shimReq = JSON.parse(body) as ShimRequest;
      command = shimReq.env?.CNI_COMMAND ?? '';
      const v = shimReq.config?.cniVersion;
      if (typeof v === 'string' && isSupportedVersion(v)) version = v;
      const result = await handle(shimReq, ac.signal);
      answer = { status: 200, body: result };
      log.debug({ command, containerID: shimReq.env?.CNI_CONTAINERID, ms: Math.round(performance.now() - started) }, 'CNI request served');
    } catch (err) {
      answer = { status: 422, body: toSpecError(err, version) };
      log.warn({ command, err: answer.body }, 'CNI request failed');
    }
    const body = answer.body ? JSON.stringify(answer.body) : '';
    res.writeHead(answer.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
  }

  let writes = 0;
  const writeChain = async (): Promise<void> => {
    if (!opts.chainConfDir || !current) return;
    const file = join(opts.chainConfDir, `10-${current.name}.conflist`);
    await mkdir(opts.chainConfDir, { recursive: true });
    const tmp = `${file}.tmp-${process.pid}-${++writes}`;
    await writeFile(tmp, current.bytes, { mode: 0o644 });
    await rename(tmp, file);
  };

  await writeChain();
  await listenUnix(server, opts.socketPath);
  log.info({ socketPath: opts.socketPath }, 'CNI service listening');
  if (opts.runtimeConfDir) await writeRuntimeConflist({ confDir: opts.runtimeConfDir, socketPath: opts.socketPath });

  let closing: Promise<void> | undefined;
  return {
    engine,
    socketPath: opts.socketPath,
    network: () => current,
    async check(a, o = {}) {
      await engine.check(await listForCheck(a), a, o);
    },
    gc: (validAttachments, o = {}) => gc(validAttachments, o.signal),
    setPodCIDR(cidr: string) {
      const next = buildNodeChain({ ...chainOpts, podCIDR: cidr }); // throws on a bad CIDR before anything changes
      chainOpts = { ...chainOpts, podCIDR: cidr };
      current = next;
      log.info({ podCIDR: cidr }, 'Pod CIDR set');
      writeChain().catch((err: unknown) => log.warn({ err: String(err), dir: opts.chainConfDir }, 'Writing the node chain conflist failed'));
    },
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await rm(opts.socketPath, { force: true });
      })();
      return closing;
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_REQUEST_BYTES) req.destroy(new CniError({ cniCode: CniCode.DecodingFailure, msg: 'request too large' }));
      else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Listens on a unix socket (mode 0600), replacing a stale socket file but never a live one. */
async function listenUnix(server: Server, path: string): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  if (await lstat(path).then((s) => s.isSocket(), () => false)) {
    const live = await new Promise<boolean>((resolve) => {
      const s = connect(path, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (live) throw new AgentError('ERR_ALREADY_EXISTS', `another CNI service is listening on "${path}"; stop it or choose another socket path`);
    await rm(path, { force: true });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(path, 0o600);
}
