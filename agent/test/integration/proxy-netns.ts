/**
 * A node in network namespaces for the service proxy tests, so the rules never touch the host:
 *
 *   ext ns (192.168.77.2) ──veth── node ns: br0 10.244.0.1/24, 192.168.77.1 ── veth (hairpin) ── pod ns p<i> (10.244.0.1<i>)
 *
 * The node ns is where the proxy's nft/conntrack/sysctl run (`netns` option); pods run
 * proxy-peer.mjs servers and clients. `destroy()` kills every process started and deletes every
 * namespace (which takes the table, veths and conntrack entries with it), even after a failure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { sh, sweepDeadRuns } from './netns-kit.js';

const PEER = fileURLToPath(new URL('./proxy-peer.mjs', import.meta.url));

export interface HttpResult {
  ok: boolean;
  body?: string;
  code?: string;
  ms: number;
}

const NS_NAME = /^npx-(?:node|ext|p\d+)-(\d+)$/;

export class NetnsNode {
  readonly id = `${process.pid}`;
  readonly node = `npx-node-${this.id}`;
  readonly ext = `npx-ext-${this.id}`;
  readonly nodeIP = '192.168.77.1';
  readonly extIP = '192.168.77.2';
  readonly #namespaces: string[] = [];
  readonly #procs = new Map<string, ChildProcess>();

  /** Creates the node and the external host (after removing what killed runs left). */
  setup(): void {
    sweepDeadRuns(NS_NAME);
    for (const ns of [this.node, this.ext]) this.#addNs(ns);
    const n = ['ip', 'netns', 'exec', this.node];
    sh([...n, 'ip', 'link', 'add', 'br0', 'type', 'bridge']);
    sh([...n, 'ip', 'addr', 'add', '10.244.0.1/24', 'dev', 'br0']);
    sh([...n, 'ip', 'link', 'set', 'br0', 'up']);
    sh([...n, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    // Pod-to-pod Service traffic on one bridge needs the bridge to pass through netfilter.
    sh([...n, 'sysctl', '-qw', 'net.bridge.bridge-nf-call-iptables=1'], true);
    sh(['ip', 'link', 'add', `nx${this.id}`, 'netns', this.node, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', this.ext]);
    sh([...n, 'ip', 'addr', 'add', `${this.nodeIP}/24`, 'dev', `nx${this.id}`]);
    sh([...n, 'ip', 'link', 'set', `nx${this.id}`, 'up']);
    const e = ['ip', 'netns', 'exec', this.ext];
    sh([...e, 'ip', 'addr', 'add', `${this.extIP}/24`, 'dev', 'eth0']);
    sh([...e, 'ip', 'link', 'set', 'eth0', 'up']);
    // Without the proxy's rules a service IP would leave the node this way.
    sh([...n, 'ip', 'route', 'add', 'default', 'via', this.extIP]);
  }

  /** A pod `p<i>` with IP 10.244.0.<10+i> on br0 (hairpin on its port). */
  addPod(i: number): { ns: string; ip: string } {
    const ns = `npx-p${i}-${this.id}`;
    const ip = `10.244.0.${10 + i}`;
    const veth = `np${i}x${this.id}`;
    this.#addNs(ns);
    sh(['ip', 'link', 'add', veth, 'netns', this.node, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    const n = ['ip', 'netns', 'exec', this.node];
    sh([...n, 'ip', 'link', 'set', veth, 'master', 'br0']);
    sh([...n, 'ip', 'link', 'set', veth, 'up']);
    sh([...n, 'bridge', 'link', 'set', 'dev', veth, 'hairpin', 'on']);
    const p = ['ip', 'netns', 'exec', ns];
    sh([...p, 'ip', 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    sh([...p, 'ip', 'link', 'set', 'eth0', 'up']);
    sh([...p, 'ip', 'route', 'add', 'default', 'via', '10.244.0.1']);
    return { ns, ip };
  }

  #addNs(ns: string): void {
    sh(['ip', 'netns', 'add', ns]);
    this.#namespaces.push(ns);
    sh(['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
  }

  /** Starts proxy-peer servers in `ns`, answering `name`; resolves once they listen. */
  async serve(ns: string, name: string, o: { tcp?: number; udp?: number }): Promise<void> {
    const args = ['netns', 'exec', ns, process.execPath, PEER, 'serve', '--name', name];
    if (o.tcp) args.push('--tcp', String(o.tcp));
    if (o.udp) args.push('--udp', String(o.udp));
    const child = spawn('ip', args, { stdio: ['ignore', 'pipe', 'inherit'] });
    this.#procs.set(name, child);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    await Promise.race([
      new Promise<void>((resolve) => child.stdout!.on('data', () => out.includes('ready') && resolve())),
      once(child, 'exit').then(([code]) => {
        throw new Error(`server ${name} exited (${code})`);
      }),
    ]);
  }

  /** Stops the servers started as `name`. */
  async stopServer(name: string): Promise<void> {
    const c = this.#procs.get(name);
    if (!c || c.exitCode !== null) return;
    c.kill('SIGTERM');
    await once(c, 'exit');
    this.#procs.delete(name);
  }

  /** Runs a proxy-peer client in `ns` and returns its JSON. */
  async client<T>(ns: string, args: string[]): Promise<T> {
    const child = spawn('ip', ['netns', 'exec', ns, process.execPath, PEER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = await once(child, 'exit');
    if (code !== 0) throw new Error(`client ${args.join(' ')} exited ${code}`);
    return JSON.parse(out) as T;
  }

  http(ns: string, url: string, count = 1): Promise<HttpResult[]> {
    return this.client(ns, ['http', '--url', url, '--count', String(count)]);
  }

  /** Runs `cmd` in the node namespace. */
  inNode(cmd: string[], allowFail = false): string {
    return sh(['ip', 'netns', 'exec', this.node, ...cmd], allowFail);
  }

  async destroy(): Promise<void> {
    for (const [, c] of this.#procs) {
      if (c.exitCode === null) {
        c.kill('SIGKILL');
        await once(c, 'exit').catch(() => undefined);
      }
    }
    this.#procs.clear();
    for (const ns of this.#namespaces.reverse()) sh(['ip', 'netns', 'del', ns], true);
    this.#namespaces.length = 0;
  }
}
