/**
 * Brings up the whole `nodelet server` in-process: PKI and admin credentials under the data dir,
 * the store, the API server, the read-only OCI registry, and the scheduler and controllers (as
 * API clients with the admin token, like any other client).
 *
 *   startControlPlane ─▶ ensurePki ─▶ ensureToken ─▶ openStore ─▶ createApiServer.listen
 *                     ─▶ admin.kubeconfig ─▶ registry ─▶ scheduler + controllers
 *   close()           ◀─ controllers, scheduler ◀─ registry ◀─ API server (ends watches) ◀─ store
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiClient } from '@nodelet/api';
import { noopLogger, type Logger } from '@nodelet/base';
import { startRegistry, type Registry as OciRegistry } from '@nodelet/oci';
import { startControllerManager, type ControllerManagerHandle } from '../controllers/index.js';
import { ensurePki } from '../pki/pki.js';
import { ensureToken, renderKubeconfig, writeKubeconfig } from '../pki/kubeconfig.js';
import { startScheduler, type SchedulerHandle } from '../scheduler/index.js';
import { openStore } from '../storage/index.js';
import type { Store } from '../storage/types.js';
import { createTokenAuthenticator } from './auth/authenticator.js';
import { ADMIN_GROUP } from './auth/types.js';
import type { ApiServerLimits } from './limits.js';
import { createApiServer, type ApiServer } from './server.js';

export interface ControlPlaneOptions {
  dataDir: string;
  /** `sqlite://…`, `etcd://host:port` (default SQLite in the data dir). */
  datastoreEndpoint?: string;
  bindAddress?: string;
  port?: number;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** `host:port` of the OCI registry; '' disables it. */
  registryAddress?: string;
  /** OCI image store the registry serves. */
  registryRoot?: string;
  clusterCidr?: string;
  logger?: Logger;
  /** Use this store instead of opening one (tests); it is not closed by close(). */
  store?: Store;
  /** Start the scheduler and controllers (default true). */
  controllers?: boolean;
  /** Node lifecycle: silence before a node goes Unknown (default 50 s). */
  nodeMonitorGracePeriodMs?: number;
  /** API server bounds: in-flight requests, request timeout, … (defaults as kube-apiserver). */
  limits?: Partial<ApiServerLimits>;
  now?: () => number;
}

export interface ControlPlane {
  url: string;
  port: number;
  adminToken: string;
  kubeconfigPath: string;
  caPem: string;
  store: Store;
  apiServer: ApiServer;
  registry?: OciRegistry;
  close(): Promise<void>;
}

export async function startControlPlane(o: ControlPlaneOptions): Promise<ControlPlane> {
  const log = o.logger ?? noopLogger;
  const cleanups: Array<() => Promise<void>> = [];
  const undo = async (): Promise<void> => {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => log.warn({ err }, 'Shutdown step failed'));
  };
  try {
    await mkdir(o.dataDir, { recursive: true, mode: 0o700 });
    const bind = o.bindAddress ?? '0.0.0.0';
    const pki = await ensurePki({ dir: join(o.dataDir, 'pki'), extraIps: bind !== '0.0.0.0' && bind !== '::' ? [bind] : [] });
    const tls =
      o.tlsCertFile && o.tlsPrivateKeyFile
        ? { cert: await readFile(o.tlsCertFile, 'utf8'), key: await readFile(o.tlsPrivateKeyFile, 'utf8') }
        : // The chain includes the CA so `nodelet join` can pin it by hash before sending a token.
          { cert: pki.serving.certPem.trimEnd() + '\n' + pki.caPem, key: pki.serving.keyPem };
    const adminToken = await ensureToken(join(o.dataDir, 'admin.token'));
    const store = o.store ?? openStore(o.datastoreEndpoint, { dataDir: o.dataDir, logger: log.child({ component: 'storage' }) });
    if (!o.store) cleanups.push(() => store.close());
    const now = o.now ?? Date.now;
    const ref: { server?: ApiServer } = {};
    const authenticator = createTokenAuthenticator({
      staticTokens: new Map([[adminToken, { name: 'system:admin', groups: [ADMIN_GROUP, 'system:authenticated'] }]]),
      getSecret: (name) => ref.server!.context.resource('', 'v1', 'secrets')!.registry.find('kube-system', name),
      now,
    });
    const apiServer = await createApiServer({
      store,
      authenticator,
      logger: log.child({ component: 'apiserver' }),
      tls,
      caPem: pki.caPem,
      nodeProxy: { clientCert: pki.agentClient.certPem, clientKey: pki.agentClient.keyPem },
      now,
      ...(o.limits ? { limits: o.limits } : {}),
    });
    ref.server = apiServer;
    cleanups.push(() => apiServer.close());
    const { port } = await apiServer.listen({ port: o.port ?? 6443, host: bind });
    const host = bind === '0.0.0.0' || bind === '::' ? '127.0.0.1' : bind.includes(':') ? `[${bind}]` : bind;
    const url = `https://${host}:${port}`;
    const kubeconfigPath = join(o.dataDir, 'admin.kubeconfig');
    await writeKubeconfig(kubeconfigPath, renderKubeconfig({ server: url, caPem: pki.caPem, token: adminToken }));

    let registry: OciRegistry | undefined;
    const regAddr = o.registryAddress ?? '127.0.0.1:5000';
    const regRoot = o.registryRoot ?? join(process.cwd(), 'build', 'images');
    if (regAddr && existsSync(regRoot)) {
      const i = regAddr.lastIndexOf(':');
      registry = await startRegistry({ root: regRoot, host: regAddr.slice(0, i) || '127.0.0.1', port: Number(regAddr.slice(i + 1)), logger: log });
      cleanups.push(() => registry!.close());
    } else if (regAddr) {
      log.warn({ root: regRoot }, 'Image store missing; registry not started (run: nodelet image build)');
    }

    if (o.controllers !== false) {
      const stopControllers = new AbortController();
      const client = new ApiClient({ server: url, token: adminToken, ca: pki.caPem, userAgent: 'nodelet-server' });
      const scheduler: SchedulerHandle = await startScheduler({ client, logger: log.child({ component: 'scheduler' }), signal: stopControllers.signal });
      const manager: ControllerManagerHandle = await startControllerManager({
        client,
        logger: log.child({ component: 'controller-manager' }),
        signal: stopControllers.signal,
        ...(o.clusterCidr ? { clusterCidr: o.clusterCidr } : {}),
        ...(o.nodeMonitorGracePeriodMs ? { nodeMonitorGracePeriodMs: o.nodeMonitorGracePeriodMs } : {}),
      });
      cleanups.push(async () => {
        stopControllers.abort();
        await Promise.all([scheduler.close(), manager.close()]);
      });
    }
    let closing: Promise<void> | undefined;
    return { url, port, adminToken, kubeconfigPath, caPem: pki.caPem, store, apiServer, registry, close: () => (closing ??= undo()) };
  } catch (err) {
    await undo();
    throw err;
  }
}
