/**
 * Three "machines" in network namespaces for the pod routing tests, none sharing a route:
 *
 *   m1 192.168.90.1 ─┐                              ┌─ m3 192.168.91.3 (behind the router)
 *   m2 192.168.90.2 ─┴─ br0 ▶ router ns (.90.254 / .91.254, forwarding) ◀─┘
 *
 * Each machine has a pod bridge cbr0 (10.244.<i>.1/24) and one pod namespace (10.244.<i>.10)
 * running a TCP server that answers with the caller's address (so a NAT on the way shows). Only
 * the default routes towards the router are set here; pod routes are the route managers' job.
 * `destroy()` kills every process and deletes every namespace (their links go with them).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { promisify } from 'node:util';
import { sh, sweepDeadRuns } from './netns-kit.js';

const run = promisify(execFile);

const SERVER = `require('net').createServer((s) => { s.write(s.remoteAddress + '\\n'); s.pipe(s); }).listen(7000, '0.0.0.0', () => console.log('ready'));`;
// Connects, prints the server's first line, then echoes each stdin line through the connection.
const CLIENT = `const s = require('net').connect(7000, process.argv[1]); s.setEncoding('utf8');
s.on('data', (d) => process.stdout.write(d)); s.on('error', (e) => { console.error(e.message); process.exit(1); });
process.stdin.on('data', (d) => s.write(d)); setTimeout(() => {}, 1e9);`;

export interface Machine {
  name: string;
  ns: string;
  ip: string;
  podCIDR: string;
  pod: { ns: string; ip: string };
}

export class RoutedMachines {
  readonly id = `${process.pid}`;
  readonly router = `nrt-r-${this.id}`;
  readonly machines: Machine[] = [];
  readonly #namespaces: string[] = [];
  readonly #procs: ChildProcess[] = [];

  setup(): void {
    sweepDeadRuns(/^nrt-(?:r|m\d|p\d)-(\d+)$/);
    this.#addNs(this.router);
    const r = ['ip', 'netns', 'exec', this.router];
    sh([...r, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    sh([...r, 'ip', 'link', 'add', 'br0', 'type', 'bridge']);
    sh([...r, 'ip', 'addr', 'add', '192.168.90.254/24', 'dev', 'br0']);
    sh([...r, 'ip', 'link', 'set', 'br0', 'up']);
    this.#machine(1, '192.168.90.1', '192.168.90.254', true);
    this.#machine(2, '192.168.90.2', '192.168.90.254', true);
    this.#machine(3, '192.168.91.3', '192.168.91.254', false);
  }

  #machine(i: number, ip: string, gw: string, onLan: boolean): void {
    const ns = `nrt-m${i}-${this.id}`;
    const podNs = `nrt-p${i}-${this.id}`;
    this.#addNs(ns);
    this.#addNs(podNs);
    const m = ['ip', 'netns', 'exec', ns];
    const r = ['ip', 'netns', 'exec', this.router];
    const up = `nrtu${i}`;
    sh(['ip', 'link', 'add', up, 'netns', this.router, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    if (onLan) sh([...r, 'ip', 'link', 'set', up, 'master', 'br0']);
    else sh([...r, 'ip', 'addr', 'add', `${gw}/24`, 'dev', up]);
    sh([...r, 'ip', 'link', 'set', up, 'up']);
    sh([...m, 'ip', 'addr', 'add', `${ip}/24`, 'dev', 'eth0']);
    sh([...m, 'ip', 'link', 'set', 'eth0', 'up']);
    sh([...m, 'ip', 'route', 'add', 'default', 'via', gw]);
    sh([...m, 'sysctl', '-qw', 'net.ipv4.ip_forward=1']);
    sh([...m, 'ip', 'link', 'add', 'cbr0', 'type', 'bridge']);
    sh([...m, 'ip', 'addr', 'add', `10.244.${i}.1/24`, 'dev', 'cbr0']);
    sh([...m, 'ip', 'link', 'set', 'cbr0', 'up']);
    sh(['ip', 'link', 'add', 'veth0', 'netns', ns, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', podNs]);
    sh([...m, 'ip', 'link', 'set', 'veth0', 'master', 'cbr0']);
    sh([...m, 'ip', 'link', 'set', 'veth0', 'up']);
    const p = ['ip', 'netns', 'exec', podNs];
    sh([...p, 'ip', 'addr', 'add', `10.244.${i}.10/24`, 'dev', 'eth0']);
    sh([...p, 'ip', 'link', 'set', 'eth0', 'up']);
    sh([...p, 'ip', 'route', 'add', 'default', 'via', `10.244.${i}.1`]);
    this.machines.push({ name: `n${i}`, ns, ip, podCIDR: `10.244.${i}.0/24`, pod: { ns: podNs, ip: `10.244.${i}.10` } });
  }

  #addNs(ns: string): void {
    sh(['ip', 'netns', 'add', ns]);
    this.#namespaces.push(ns);
    sh(['ip', 'netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
  }

  /** Starts the pod's TCP server; resolves once it listens. */
  async serve(podNs: string): Promise<void> {
    const child = spawn('ip', ['netns', 'exec', podNs, process.execPath, '-e', SERVER], { stdio: ['ignore', 'pipe', 'inherit'] });
    this.#procs.push(child);
    await once(child.stdout!, 'data');
  }

  /** One connection from `podNs` to `ip`: the address the server saw, or the error (async: the managers run meanwhile). */
  async connectOnce(podNs: string, ip: string): Promise<string> {
    const code = `const s = require('net').connect(7000, '${ip}'); s.setEncoding('utf8'); s.on('data', (d) => { process.stdout.write(d); process.exit(0); });
s.on('error', (e) => { process.stdout.write('error ' + e.message); process.exit(0); }); setTimeout(() => { process.stdout.write('timeout'); process.exit(0); }, 5000);`;
    const { stdout } = await run('ip', ['netns', 'exec', podNs, process.execPath, '-e', code]);
    return stdout.trim();
  }

  /** A kept-open connection: `send(line)` resolves with the echoed line. */
  async connection(podNs: string, ip: string): Promise<{ first: string; send(line: string): Promise<string> }> {
    const child = spawn('ip', ['netns', 'exec', podNs, process.execPath, '-e', CLIENT, ip], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.#procs.push(child);
    child.stdout!.setEncoding('utf8');
    const nextLine = (): Promise<string> => new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no answer on the connection within 10 s')), 10_000);
      child.stdout!.once('data', (d: string) => {
        clearTimeout(t);
        resolve(d.trim());
      });
    });
    const first = await nextLine();
    return {
      first,
      send: (line) => {
        const p = nextLine();
        child.stdin!.write(`${line}\n`);
        return p;
      },
    };
  }

  async destroy(): Promise<void> {
    for (const c of this.#procs) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await once(c, 'exit').catch(() => undefined);
      }
    }
    for (const ns of this.#namespaces.reverse()) sh(['ip', 'netns', 'del', ns], true);
    this.#namespaces.length = 0;
  }
}
