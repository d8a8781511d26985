/**
 * One `nodelet server` on a fixed port for benches that kill and restart servers (bench/ha.ts,
 * ha-leader.ts): a restartable handle over the test kit's startServerProcess
 * (`@nodelet/base/testing`), which starts it (the built dist, or the sources with `source`),
 * awaits its "Server ready" line and stops or kills it by PID.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { copyClusterSecrets, startServerProcess, type ServerProcess as KitProcess } from '@nodelet/base/testing';

export interface ServerProcessOptions {
  dataDir: string;
  port: number;
  /** `--datastore-endpoint`. */
  etcd: string;
  /** Run bin/nodelet-dev (the TypeScript sources) instead of the built dist. */
  source?: boolean;
  /** Flags after the common ones (default: `--disable-controllers`). */
  flags?: string[];
}

export class ServerProcess {
  #proc: KitProcess | undefined;
  /** holderIdentity of this server's leader Leases, from its "Server ready" line. */
  leaderIdentity: string | undefined;
  constructor(readonly o: ServerProcessOptions) {}

  get dataDir(): string {
    return this.o.dataDir;
  }

  get url(): string {
    return `https://127.0.0.1:${this.o.port}`;
  }

  /** Started and not killed or stopped since. */
  get running(): boolean {
    return this.#proc !== undefined;
  }

  async start(): Promise<void> {
    this.#proc = await startServerProcess({
      dataDir: this.o.dataDir, port: this.o.port, datastore: this.o.etcd, dist: !this.o.source, graceMs: 5_000,
      args: this.o.flags ?? ['--disable-controllers'],
    });
    this.leaderIdentity = this.#proc.leaderIdentity;
  }

  /** SIGKILL by PID: no shutdown, no lease release. */
  async kill(): Promise<void> {
    const proc = this.#proc;
    this.#proc = undefined;
    await proc?.kill('SIGKILL');
    await proc?.stop(); // gone: this removes its output file
  }

  async stop(): Promise<void> {
    const proc = this.#proc;
    this.#proc = undefined;
    await proc?.stop();
  }
}

/**
 * Starts `second` as a second server of `first`'s control plane: `first` starts and makes the
 * PKI, `second` gets its cluster secrets (what `nodelet install server --join` fetches,
 * docs/ha.md) and starts. Returns the admin credential both accept: `first`'s admin client
 * certificate (the one in its admin.kubeconfig, signed by the shared CA).
 */
export async function startServerPair(first: ServerProcess, second: ServerProcess): Promise<{ cert: string; key: string; ca: Buffer }> {
  await first.start();
  await copyClusterSecrets(first.dataDir, second.dataDir);
  await second.start();
  const pki = join(first.dataDir, 'pki');
  return { cert: await readFile(join(pki, 'admin.crt'), 'utf8'), key: await readFile(join(pki, 'admin.key'), 'utf8'), ca: await readFile(join(pki, 'ca.crt')) };
}
