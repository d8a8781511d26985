/** Shared helpers of the e2e suites: the real kubectl, free ports, polling with a deadline. */
import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { request } from 'node:http';

export interface Kubectl {
  (...args: string[]): Promise<string>;
  /** Like the call, but resolves with the exit code and output instead of throwing. */
  try(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

/**
 * The real /usr/bin/kubectl against `kubeconfig`, with a private discovery cache beside the
 * kubeconfig (inside the lab's state dir, so it goes when the test removes the lab).
 */
export function kubectl(kubeconfig: string): Kubectl {
  const cache = join(dirname(kubeconfig), 'kubectl-cache');
  mkdirSync(cache, { recursive: true, mode: 0o700 });
  const run = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('kubectl', ['--kubeconfig', kubeconfig, '--cache-dir', cache, ...args], { timeout: 180_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  const k = (async (...args: string[]) => {
    const r = await run(args);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
    return r.stdout;
  }) as Kubectl;
  k.try = (...args: string[]) => run(args);
  return k;
}

/** One HTTP GET (status code), or undefined when nothing answers. */
export function httpStatus(host: string, port: number, timeoutMs = 3_000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end();
  });
}

/** True when `ip` (dotted quad) lies in `cidr`. */
export function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const n = (s: string) => s.split('.').reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return ((n(ip) & mask) >>> 0) === ((n(base!) & mask) >>> 0);
}

/** `nft` in the host's namespace, or in `netns`. */
export function nft(args: string[], netns?: string): { status: number | null; stdout: string } {
  const argv = netns ? ['netns', 'exec', netns, 'nft', ...args] : args;
  return spawnSync(netns ? 'ip' : 'nft', argv, { encoding: 'utf8' });
}

/** The proxy table as `nft list table` prints it; undefined when it does not exist. */
export function proxyTable(netns?: string): string | undefined {
  const r = nft(['list', 'table', 'ip', 'nodelet-proxy'], netns);
  return r.status === 0 ? r.stdout : undefined;
}

/** Keys (`ip . proto . port`, `proto . port`) of a verdict map of the live proxy table of a namespace. */
export function nftMapKeys(map: string, netns?: string): string[] {
  const r = nft(['-j', 'list', 'map', 'ip', 'nodelet-proxy', map], netns);
  if (r.status !== 0) return [];
  const doc = JSON.parse(r.stdout) as { nftables: Array<{ map?: { elem?: unknown[] } }> };
  return (doc.nftables.find((o) => o.map)?.map?.elem ?? []).map((e) => {
    let k = (e as unknown[])[0] as { concat?: unknown[]; elem?: { val?: unknown } };
    if (k.elem) k = k.elem.val as typeof k;
    return (k.concat ?? []).join(' . ');
  });
}
