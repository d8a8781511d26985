/** Per-server and per-request state shared by the handlers. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '@nodelet/base';
import type { Store } from '../storage/types.js';
import type { Authorizer, UserInfo } from './auth/types.js';
import type { RbacAuthorizer } from './auth/rbac/rbac-authorizer.js';
import type { ResourceMirror } from './mirror.js';
import type { ServiceAccountTokens } from './auth/serviceaccount/tokens.js';
import type { ApiObject } from './object.js';
import type { Registry } from './registry.js';
import type { ResourceCatalog } from './catalog.js';
import type { ResourceDef } from './resource.js';
import type { WatchCache } from './watch-cache.js';
import type { WatchEventEncoder } from './watch-encoding.js';
import type { PodJourneys } from './pod-journeys.js';
import type { PodSecurityConfig } from './admission/pod-security/config.js';

export interface ServedResource {
  def: ResourceDef;
  registry: Registry;
  cache: WatchCache;
}

export interface ServerContext {
  store: Store;
  logger: Logger;
  /** Epoch ms; injected so tests control time. */
  now(): number;
  resource(group: string, version: string, plural: string): ServedResource | undefined;
  resourceByKind(apiVersion: string, kind: string): ServedResource | undefined;
  /** The served resource of `group` named `plural`, in any version. */
  resourceByGroup(group: string, plural: string): ServedResource | undefined;
  /** Everything served, built-in and custom (catalog.ts); the three lookups above read it. */
  catalog: ResourceCatalog;
  /** Ends long-running requests (watches, log follows) on shutdown. */
  shutdown: AbortSignal;
  /** Opens the agent connection for pods/log and pods/exec (see handlers/node-proxy.ts). */
  nodeProxy: NodeProxyConfig;
  /** Where this server listens (once listening): agent dials never come back to it (handlers/proxy-target.ts). */
  listeningOn?(): { address: string; port: number } | undefined;
  /** The server's token authenticator (TokenReview answers with it). */
  authenticateToken(token: string): Promise<UserInfo | undefined>;
  /** Default bookmark interval for watches, ms. */
  bookmarkIntervalMs: number;
  /** The authorizer chain (Node → RBAC); admission and the review kinds use it too. */
  authorizer: Authorizer;
  /** RBAC rule resolution (SelfSubjectRulesReview, escalation checks). */
  rbac: RbacAuthorizer;
  /**
   * The server's in-memory mirror of `def` when it keeps one (RBAC kinds for the authorizer,
   * namespaces and service accounts for admission), for read-your-writes.
   */
  mirrorOf?(def: ResourceDef): ResourceMirror | undefined;
  /**
   * Mirrors kept for the server's own lookups only (pods, for NodeRestriction: mirror.ts
   * findForCheck), with no read-your-writes wait on writes to them, which would delay every pod
   * write by a watch delivery.
   */
  lookupMirrorOf?(def: ResourceDef): ResourceMirror | undefined;
  /** The cluster CA (PEM), handed out with node credentials. */
  caPem?: string;
  /** Lifetime of issued node credentials (default one year). */
  nodeCredentialTtlMs?: number;
  /** The Service ClusterIP range (default 10.96.0.0/16). */
  serviceCidr?: string;
  /** Issues and checks service-account tokens (undefined: no signing key, TokenRequest is 404). */
  serviceAccountTokens?: ServiceAccountTokens;
  /** A watch with more unsent bytes than this is closed (limits.ts). */
  maxWatchBufferBytes: number;
  /** Encodes each watch event once for all its watchers (watch-encoding.ts); unset: per watcher. */
  watchEncoder?: WatchEventEncoder;
  /** Pod journey tracing (pod-journeys.ts); undefined when the server was started without a tracer. */
  journeys?: PodJourneys;
  /** PodSecurity admission's defaults and exemptions (admission/pod-security/); undefined: privileged everywhere, none. */
  podSecurity?: PodSecurityConfig;
}

export interface NodeProxyConfig {
  /** Client credential the server presents to agents. */
  clientCert?: string;
  clientKey?: string;
  /** Bearer token sent to agents (alternative or addition to the client certificate). */
  token?: string;
  /** CA to verify agent serving certificates; undefined = not verified (kubelet default). */
  ca?: string;
}

export interface RequestScope {
  ctx: ServerContext;
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  user: UserInfo;
  log: Logger;
  /**
   * Aborted when the request times out, its client goes away or its reply is done
   * (filters/chain.ts): the body read, admission and the REST verbs' store calls take it.
   */
  signal: AbortSignal;
  served: ServedResource;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  /** `nodes/<name>/proxy/<path>`: the agent path (router.ts). */
  proxyPath?: string;
  /** The request body when the edge already read it (NodeRestriction of creates). */
  body?: Buffer;
  /**
   * Annotations admission plugins added for this request's audit event (`pod-security.kubernetes.io/…`,
   * admission/recorder.ts); the audit log reads them when it writes the event.
   */
  auditAnnotations?: Record<string, string>;
}

/** Sets apiVersion/kind on an object as served (the store does not rely on them). */
export function withTypeMeta(def: ResourceDef, obj: ApiObject): ApiObject {
  return { apiVersion: def.group ? `${def.group}/${def.version}` : def.version, kind: def.kind, ...obj };
}
