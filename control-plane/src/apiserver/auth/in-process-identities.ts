/**
 * Credentials of the components that run inside `nodelet server` — the scheduler, the
 * controller manager's informers, and each controller — so each acts with its own identity and
 * only its RBAC role (kube-controller-manager's `--use-service-account-credentials`):
 *
 *   scheduler                 User system:kube-scheduler
 *   controller-manager        User system:kube-controller-manager (reads everything for the informers)
 *   <controller>              ServiceAccount kube-system/<controller> (system:controller:<controller>)
 *   metrics-server            ServiceAccount kube-system/metrics-server (system:metrics-server): lists
 *                             nodes, and scrapes their agents, which check its token with a TokenReview
 *
 * The tokens are random per server start, live only in this process's memory, and are never
 * written anywhere: nothing outside the process can use them.
 */
import { randomBytes } from 'node:crypto';
import { AgentError } from '@nodelet/base';
import { CONTROLLER_ACCOUNTS } from './rbac/controller-roles.js';
import { AUTHENTICATED_GROUP, serviceAccountUser, type UserInfo } from './types.js';

export interface InProcessIdentities {
  /** token → user, for the token authenticator. */
  tokens: ReadonlyMap<string, UserInfo>;
  scheduler: string;
  controllerManager: string;
  metricsServer: string;
  /** The token of controller service account `kube-system/<account>` (one of CONTROLLER_ACCOUNTS). */
  controller(account: string): string;
}

export function createInProcessIdentities(): InProcessIdentities {
  const tokens = new Map<string, UserInfo>();
  const mint = (user: UserInfo): string => {
    const token = `inproc.${randomBytes(32).toString('base64url')}`;
    tokens.set(token, user);
    return token;
  };
  // All minted now: the authenticator takes the token table once, at construction.
  const byAccount = new Map<string, string>(CONTROLLER_ACCOUNTS.map((a) => [a, mint(serviceAccountUser('kube-system', a))]));
  return {
    tokens,
    scheduler: mint({ name: 'system:kube-scheduler', groups: [AUTHENTICATED_GROUP] }),
    controllerManager: mint({ name: 'system:kube-controller-manager', groups: [AUTHENTICATED_GROUP] }),
    metricsServer: mint(serviceAccountUser('kube-system', 'metrics-server')),
    controller(account) {
      const t = byAccount.get(account);
      if (!t) throw new AgentError('ERR_INVALID_ARGUMENT', `no controller identity "${account}" (see auth/rbac/controller-roles.ts)`);
      return t;
    },
  };
}
