/**
 * A TCP server's side of its connections, read from /proc/net (the benches run Linux): which
 * clients are connected, how many connections wait to be accepted, and how many the kernel
 * dropped for a full accept queue.
 */
import { existsSync, readFileSync } from 'node:fs';

/** The lines of /proc/net/tcp and tcp6 whose local port is `port`, split into columns. */
function socketsOn(port: number): string[][] {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const out: string[][] = [];
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(f)) continue;
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(hex)) out.push(cols);
    }
  }
  return out;
}

/**
 * The established TCP connections whose local port is `port` (the server's side of every client
 * connection), each as its remote `address:port` in /proc's hex.
 */
export function establishedTo(port: number): string[] {
  return socketsOn(port).filter((c) => c[3] === '01').map((c) => c[2]!);
}

/** The accept queue of the listening socket on `port` now (connections the kernel completed and the server has not accepted yet). */
export function acceptQueue(port: number): number {
  // A listener's rx_queue is its accept queue's length.
  return socketsOn(port).filter((c) => c[3] === '0A').reduce((n, c) => n + Number.parseInt(c[4]!.split(':')[1]!, 16), 0);
}

/**
 * The kernel's count of connections dropped because a listener's accept queue was full (TcpExt
 * ListenOverflows, the whole machine: other processes' listeners count too). Each drop makes the
 * client resend its SYN 1, 3, 7 s later: a connect that waits seconds, or times out.
 */
export function listenOverflows(): number {
  const lines = readFileSync('/proc/net/netstat', 'utf8').split('\n').filter((l) => l.startsWith('TcpExt:'));
  const [names, values] = lines.map((l) => l.split(/\s+/));
  const i = names?.indexOf('ListenOverflows') ?? -1;
  return i > 0 ? Number(values?.[i]) : NaN;
}
