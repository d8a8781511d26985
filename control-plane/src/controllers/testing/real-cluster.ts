/**
 * The real API server for controller tests: `startControlPlane` on a loopback port with SQLite
 * in a temp dir and no controllers; tests start the controllers they exercise, each with its
 * own kube-system identity and upstream role (as `nodelet server` runs them), so a controller
 * that needs more than its role fails its test. Not a fake: every write goes through admission,
 * validation, RBAC and the store.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiClient } from '@nodelet/api';
import { noopLogger, type Clock } from '@nodelet/base';
import { startControlPlane, type ControlPlane } from '../../control-plane.js';
import { startControllerManager, type ControllerManagerHandle, type ControllerName, type StartControllerManagerOptions } from '../index.js';
import { startScheduler, type SchedulerHandle } from '../../scheduler/index.js';
import { issueCertificate, loadCa } from '../../pki/certs.js';

export interface RealCluster {
  cp: ControlPlane;
  /** `system:admin`: what the test itself reads and writes with (it also plays the agents). */
  admin: ApiClient;
  /** Starts `names` with their own identities; stopped by close(). */
  controllers(names: readonly ControllerName[], extra?: Partial<StartControllerManagerOptions> & { clock?: Clock }): Promise<ControllerManagerHandle>;
  /**
   * A client acting as controller service account kube-system/`account`, or without one as the
   * controller manager (what its shared informers read with): for a test that runs a controller itself.
   */
  as(account?: string): ApiClient;
  /** A client authenticated as node `name` (a cluster-CA client certificate for system:node:<name> in system:nodes). */
  node(name: string): Promise<ApiClient>;
  /** Starts the scheduler as system:kube-scheduler. */
  scheduler(): Promise<SchedulerHandle>;
  close(): Promise<void>;
}

export async function startRealCluster(): Promise<RealCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-ctrl-'));
  const cp = await startControlPlane({ dataDir: dir, bindAddress: '127.0.0.1', port: 0, registryAddress: '', controllers: false, logger: noopLogger });
  const clients: ApiClient[] = [];
  const client = (token: string | { cert: string; key: string }): ApiClient => {
    const c = new ApiClient({ server: cp.url, ...(typeof token === 'string' ? { token } : token), ca: cp.caPem, timeoutMs: 15_000 });
    clients.push(c);
    return c;
  };
  const admin = client(cp.adminToken);
  const handles: Array<{ close(): Promise<void> }> = [];
  const stop = new AbortController();
  const ids = cp.inProcessIdentities;
  return {
    cp,
    admin,
    async controllers(names, extra = {}) {
      const h = await startControllerManager({
        client: client(ids.controllerManager),
        clientFor: (account) => client(ids.controller(account)),
        logger: noopLogger,
        signal: stop.signal,
        controllers: names,
        ...extra,
      });
      handles.push(h);
      return h;
    },
    as(account) {
      return client(account === undefined ? ids.controllerManager : ids.controller(account));
    },
    async node(name) {
      const ca = await loadCa({ certPem: readFileSync(join(dir, 'pki', 'ca.crt'), 'utf8'), keyPem: readFileSync(join(dir, 'pki', 'ca.key'), 'utf8') });
      const pair = await issueCertificate(ca, { commonName: `system:node:${name}`, organization: 'system:nodes', usage: 'client' });
      return client({ cert: pair.certPem, key: pair.keyPem });
    },
    async scheduler() {
      const h = await startScheduler({ client: client(ids.scheduler), logger: noopLogger, signal: stop.signal });
      handles.push(h);
      return h;
    },
    async close() {
      stop.abort();
      await Promise.all(handles.map((h) => h.close()));
      for (const c of clients) c.close();
      await cp.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
