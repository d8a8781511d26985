// The controller manager (issue 6): every controller in one module, each its own work-queue loop,
// all sharing one set of informers and talking to the API only through @nodelet/api.
import { setMaxListeners } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { ApiClient } from '@nodelet/api';
import { linkAbort, systemClock, type Clock, type Logger } from '@nodelet/base';
import { runController, SharedInformers, type Controller } from './runtime.js';
import type { ControllerDeps } from './controller-base.js';
import { DeploymentController } from './deployment/controller.js';
import { REPLICATIONCONTROLLER_KIND, ReplicaSetController } from './replicaset/controller.js';
import { TokensController, type LegacyTokenSigner } from './namespace/tokens-controller.js';
import { GarbageCollector } from './gc/controller.js';
import { NodeLifecycleController } from './nodelifecycle/controller.js';
import { NodeIpamController } from './ipam/controller.js';
import { NamespaceController } from './namespace/controller.js';
import { ServiceAccountController } from './namespace/serviceaccount-controller.js';
import { EndpointsController, EndpointSliceController } from './endpoints/controller.js';
import { PodGarbageCollector } from './podgc/controller.js';
import { ClusterRoleAggregationController } from './clusterroleaggregation/controller.js';
import { KubeletClientCsrApprover, KubeletServingCsrApprover } from './certificates/approver.js';
import { CsrSigner } from './certificates/signer.js';
import { RootCaPublisher } from './rootca/publisher.js';
import { JobController } from './job/controller.js';
import { CronJobController } from './cronjob/controller.js';
import { DaemonSetController } from './daemonset/controller.js';
import { StatefulSetController } from './statefulset/controller.js';
import { PersistentVolumeBinder } from './volume/binder.js';
import { LocalPathProvisioner } from './volume/local-path-provisioner.js';
import { TtlAfterFinishedController } from './ttlafterfinished/controller.js';
import { DisruptionController } from './disruption/controller.js';
import { ResourceQuotaController } from './resourcequota/controller.js';
import { HorizontalPodAutoscalerController } from './podautoscaler/controller.js';
import { ServiceLoadBalancerController } from './servicelb/controller.js';
import { loadCa, type LoadedCa } from '../pki/certs.js';

export { SharedInformers, runController, type Controller } from './runtime.js';
export { ControllerBase, type ControllerDeps } from './controller-base.js';

/** What every new namespace needs before its pods can be admitted and run (default service account, kube-root-ca.crt). */
export const NAMESPACE_SETUP_CONTROLLERS: readonly ControllerName[] = ['serviceaccount', 'rootcacertpublisher'];

export interface ControllerManagerHandle {
  /** The controllers running and the informers they share: to observe (e.g. testing/quiesce.ts), not to drive. */
  readonly controllers: readonly Controller[];
  readonly informers: SharedInformers;
  /** Stops every controller and closes the informers. Idempotent. */
  close(): Promise<void>;
}

export type ControllerName =
  | 'deployment'
  | 'replicaset'
  | 'replicationcontroller'
  | 'garbagecollector'
  | 'nodelifecycle'
  | 'nodeipam'
  | 'namespace'
  | 'serviceaccount'
  | 'serviceaccount-token'
  | 'endpoints'
  | 'endpointslice'
  | 'podgc'
  | 'clusterroleaggregation'
  | 'csrapproving'
  | 'kubeletservingapproving'
  | 'csrsigning'
  | 'rootcacertpublisher'
  | 'job'
  | 'cronjob'
  | 'daemonset'
  | 'statefulset'
  | 'persistentvolume-binder'
  | 'local-path-provisioner'
  | 'ttl-after-finished'
  | 'disruption'
  | 'resourcequota'
  | 'horizontalpodautoscaling'
  | 'servicelb';

export interface StartControllerManagerOptions {
  /** An `ApiClient` of `@nodelet/api` (typed `unknown` for the composition root): the shared informers read with it. */
  client: unknown;
  /**
   * The client controller `account` (its kube-system service account, e.g. `deployment-controller`)
   * writes with; default: `client` for all.
   */
  clientFor?: (account: string) => unknown;
  logger: Logger;
  signal: AbortSignal;
  clock?: Clock;
  random?: () => number;
  /** Only these controllers (default: all). */
  controllers?: readonly ControllerName[];
  /** Node IPAM cluster CIDR (default 10.244.0.0/16, a /24 per node). */
  clusterCidr?: string;
  nodeCidrMaskSize?: number;
  /** Node lifecycle: grace before a silent node goes Unknown (default 50 s). */
  nodeMonitorGracePeriodMs?: number;
  /** Node lifecycle: how often node health is checked (default 5 s). */
  nodeMonitorPeriodMs?: number;
  /** The cluster CA the CSR signer signs with (PEM files); without it, approved CSRs stay unsigned. */
  csrSigning?: { caCertFile: string; caKeyFile: string; durationMs?: number };
  /** HPA: how often every autoscaler is evaluated (default 15 s; upstream --horizontal-pod-autoscaler-sync-period). */
  hpaSyncPeriodMs?: number;
  /** HPA: the ratio change below which nothing is scaled (default 0.1; upstream --horizontal-pod-autoscaler-tolerance). */
  hpaTolerance?: number;
  /** The cluster CA published in every namespace as ConfigMap kube-root-ca.crt (and put in legacy token Secrets). */
  rootCaPem?: string;
  /**
   * Addresses for LoadBalancer Services (`--service-lb-pool`, an IPv4 CIDR); without it they get
   * the InternalIPs of the ready nodes (servicelb/controller.ts).
   */
  serviceLbPool?: string;
  /** Signs legacy service-account tokens for the serviceaccount-token controller (the API server's key). */
  legacyTokenSigner?: LegacyTokenSigner;
}

type Factory = (d: ControllerDeps) => Controller;

/** Each controller and the service account (kube-system/<account>) it acts as, as in kube-controller-manager. */
const FACTORIES: Record<string, { account: string; make: Factory }> = {
  deployment: { account: 'deployment-controller', make: (d) => new DeploymentController(d) },
  replicaset: { account: 'replicaset-controller', make: (d) => new ReplicaSetController(d) },
  replicationcontroller: { account: 'replication-controller', make: (d) => new ReplicaSetController(d, REPLICATIONCONTROLLER_KIND) },
  garbagecollector: { account: 'generic-garbage-collector', make: (d) => new GarbageCollector(d) },
  nodelifecycle: { account: 'node-controller', make: (d) => new NodeLifecycleController(d) },
  nodeipam: { account: 'node-controller', make: (d) => new NodeIpamController(d) },
  namespace: { account: 'namespace-controller', make: (d) => new NamespaceController(d) },
  serviceaccount: { account: 'service-account-controller', make: (d) => new ServiceAccountController(d) },
  'serviceaccount-token': { account: 'tokens-controller', make: (d) => new TokensController(d) },
  endpoints: { account: 'endpoint-controller', make: (d) => new EndpointsController(d) },
  endpointslice: { account: 'endpointslice-controller', make: (d) => new EndpointSliceController(d) },
  podgc: { account: 'pod-garbage-collector', make: (d) => new PodGarbageCollector(d) },
  clusterroleaggregation: { account: 'clusterrole-aggregation-controller', make: (d) => new ClusterRoleAggregationController(d) },
  csrapproving: { account: 'certificate-controller', make: (d) => new KubeletClientCsrApprover(d) },
  kubeletservingapproving: { account: 'kubelet-serving-cert-approver', make: (d) => new KubeletServingCsrApprover(d) },
  rootcacertpublisher: { account: 'root-ca-cert-publisher', make: (d) => new RootCaPublisher(d) },
  job: { account: 'job-controller', make: (d) => new JobController(d) },
  cronjob: { account: 'cronjob-controller', make: (d) => new CronJobController(d) },
  daemonset: { account: 'daemon-set-controller', make: (d) => new DaemonSetController(d) },
  statefulset: { account: 'statefulset-controller', make: (d) => new StatefulSetController(d) },
  'persistentvolume-binder': { account: 'persistent-volume-binder', make: (d) => new PersistentVolumeBinder(d) },
  'local-path-provisioner': { account: 'local-path-provisioner', make: (d) => new LocalPathProvisioner(d) },
  'ttl-after-finished': { account: 'ttl-after-finished-controller', make: (d) => new TtlAfterFinishedController(d) },
  disruption: { account: 'disruption-controller', make: (d) => new DisruptionController(d) },
  resourcequota: { account: 'resourcequota-controller', make: (d) => new ResourceQuotaController(d) },
  horizontalpodautoscaling: { account: 'horizontal-pod-autoscaler', make: (d) => new HorizontalPodAutoscalerController(d) },
  servicelb: { account: 'service-controller', make: (d) => new ServiceLoadBalancerController(d) },
  csrsigning: { account: 'certificate-controller', make: (d) => new CsrSigner({ ...d, ca: caLoader(d.options.csrSigning), signingDurationMs: d.options.csrSigning?.durationMs }) },
};

/** Every controller the manager can run, by the name `--controllers` uses. */
export const CONTROLLER_NAMES: readonly ControllerName[] = Object.keys(FACTORIES) as ControllerName[];

/** Reads the CA pair once, on the first request to sign (re-read after a failure). */
function caLoader(files: StartControllerManagerOptions['csrSigning']): () => Promise<LoadedCa | undefined> {
  let loaded: Promise<LoadedCa> | undefined;
  return () => {
    if (!files) return Promise.resolve(undefined);
    loaded ??= (async () => loadCa({ certPem: await readFile(files.caCertFile, 'utf8'), keyPem: await readFile(files.caKeyFile, 'utf8') }))();
    loaded.catch(() => (loaded = undefined));
    return loaded;
  };
}

/**
 * Starts the controllers against an API server. Returns once informers are created (not
 * necessarily synced); controllers start working when their informers have synced. A
 * controller loop that crashes is logged at error level.
 */
export async function startControllerManager(opts: StartControllerManagerOptions): Promise<ControllerManagerHandle> {
  const client = opts.client as ApiClient;
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger.child({ component: 'controller-manager' });
  const informers = new SharedInformers({ client, clock, logger });
  const deps: ControllerDeps = { client, informers, clock, random: opts.random ?? Math.random, logger, options: opts };
  const names = opts.controllers ?? (Object.keys(FACTORIES) as ControllerName[]);
  const clientFor = (account: string): ApiClient => (opts.clientFor ? (opts.clientFor(account) as ApiClient) : client);
  const controllers = names
    .filter((n) => FACTORIES[n])
    .map((n) => FACTORIES[n]!.make({ ...deps, client: clientFor(FACTORIES[n]!.account), logger: logger.child({ controller: n }) }));

  const stop = linkAbort(opts.signal);
  // Every worker of every controller links its reconcile to this signal: far more than 10 listeners, by design.
  setMaxListeners(1000, stop.signal);

  informers.start();
  const running = (async () => {
    try {
      await informers.waitForSync(stop.signal);
    } catch {
      return;
    }
    logger.info({ controllers: controllers.map((c) => c.name) }, 'Controllers started');
    await Promise.all(
      controllers.map((c) =>
        runController(c, stop.signal, logger).catch((err) => logger.error({ err, controller: c.name }, 'Controller stopped unexpectedly')),
      ),
    );
  })();

  let closed: Promise<void> | undefined;
  return {
    controllers,
    informers,
    close() {
      closed ??= (async () => {
        stop.dispose();
        stop.controller.abort();
        await running;
        for (const c of controllers) c.close?.();
        await informers.close();
      })();
      return closed;
    },
  };
}
