/**
 * The node's resolver configuration: resolv.conf parsed with the kubelet's rules
 * (pkg/kubelet/network/dns/dns.go parseResolvConf), and the systemd-resolved rule.
 *
 *   - `nameserver X` lines accumulate; the last `search` line wins (trailing dots trimmed); the last
 *     `options` line wins; lines starting with `#` are comments.
 *   - When the file names systemd-resolved's stub (127.0.0.53) as a nameserver, the real upstreams are
 *     in /run/systemd/resolve/resolv.conf: that file is read instead when it exists. Pods cannot reach
 *     127.0.0.53 (it is the node's loopback), and a forwarder that sends to the stub only adds a hop.
 */
import { readFile } from 'node:fs/promises';
import { AgentError, describeError } from '@nodelet/base';

export const SYSTEMD_RESOLVED_STUB = '127.0.0.53';
export const SYSTEMD_RESOLVED_UPSTREAM_CONF = '/run/systemd/resolve/resolv.conf';
/** The kubelet reads at most this much of a resolv.conf (10 MiB). */
const MAX_RESOLV_CONF_BYTES = 10 << 20;

export interface ResolvConf {
  nameservers: string[];
  searches: string[];
  options: string[];
}

export function parseResolvConf(text: string): ResolvConf {
  const out: ResolvConf = { nameservers: [], searches: [], options: [] };
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed.startsWith('#')) continue;
    const fields = trimmed.split(/\s+/).filter(Boolean);
    if (fields[0] === 'nameserver' && fields[1]) out.nameservers.push(fields[1]);
    else if (fields[0] === 'search') out.searches = fields.slice(1).map((s) => s.replace(/\.$/, ''));
    else if (fields[0] === 'options') out.options = fields.slice(1);
  }
  return out;
}

export interface HostResolvConf extends ResolvConf {
  /** The file the values came from (the systemd-resolved one when the stub rule applied). */
  path: string;
}

/**
 * Reads `path` (and applies the systemd-resolved rule). Throws ERR_FAILED_PRECONDITION naming the
 * file when it cannot be read, as the kubelet fails the pod's sandbox config then.
 */
export async function readHostResolvConf(path: string, o: { upstreamConf?: string; signal?: AbortSignal } = {}): Promise<HostResolvConf> {
  const conf = await readConf(path, o.signal);
  if (!conf.nameservers.includes(SYSTEMD_RESOLVED_STUB)) return { ...conf, path };
  const alt = o.upstreamConf ?? SYSTEMD_RESOLVED_UPSTREAM_CONF;
  try {
    return { ...(await readConf(alt, o.signal)), path: alt };
  } catch {
    return { ...conf, path };
  }
}

async function readConf(path: string, signal?: AbortSignal): Promise<ResolvConf> {
  let buf: Buffer;
  try {
    buf = await readFile(path, { signal });
  } catch (err) {
    throw new AgentError('ERR_FAILED_PRECONDITION', `cannot read resolv.conf ${JSON.stringify(path)}: ${describeError(err)}`, { cause: err });
  }
  return parseResolvConf(buf.subarray(0, MAX_RESOLV_CONF_BYTES).toString('utf8'));
}
