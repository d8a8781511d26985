/**
 * NetworkPolicy enforcement on this node (docs/network.md "NetworkPolicy"): keeps the policy
 * rules in the service proxy's table as a contribution (render.ts), rebuilt from the shared
 * informers of NetworkPolicies, Namespaces and Pods at every proxy sync.
 *
 *   informer change ─▶ proxy.requestSync ─▶ contribution() ─▶ proxy writes (full or partial) ─▶ written()
 *   pod runtime: sandbox made (CNI ADD gave the IP) ─▶ admit(pod, ips) ─▶ sync ─▶ IP in the table ─▶ containers start
 *
 * A new pod's IP is only known after CNI ADD and reaches the API (status.podIPs) later still,
 * so the runtime hands it over directly (`admit`) and starts no container before a sync with
 * that IP is live: the pod's isolation (its ingress/egress map entries) is in place before its
 * first packet. Only the pause process exists until then, which sends nothing.
 */
import { isIPv4 } from 'node:net';
import { AgentError, abortError, type Clock, type Logger } from '@nodelet/base';
import type { Informer, Namespace, NetworkPolicy, Pod } from '@nodelet/api/agent';
import type { TableContribution, TableExtension } from '../proxy/contribution.js';
import { buildNetpolContribution, podIPv4s, type NetpolContribution } from './render.js';

export interface NetpolEnforcerOptions {
  nodeName: string;
  log: Logger;
  clock: Clock;
  /** Shared informers (source/informers.ts): subscribed to and started, never closed here. */
  informers: { policies: Informer<NetworkPolicy>; namespaces: Informer<Namespace>; pods: Informer<Pod> };
  /** How long `admit` waits for the pod's rules to be live before it fails (retryable); default 30 s. */
  admitTimeoutMs?: number;
}

export class NetworkPolicyEnforcer implements TableExtension {
  readonly #o: NetpolEnforcerOptions;
  #version = 0;
  #requestSync: (() => void) | undefined;
  /** Pods whose IPs the runtime knows before the API does, by UID. */
  readonly #admitted = new Map<string, { pod: Pod; ips: string[] }>();
  #live: NetpolContribution | undefined;
  /** The last contribution built, reused while nothing it depends on changed (Service-only syncs). */
  #last: NetpolContribution | undefined;
  readonly #waiters = new Set<() => void>();

  constructor(o: NetpolEnforcerOptions) {
    this.#o = o;
  }

  subscribe(requestSync: () => void): () => void {
    this.#requestSync = requestSync;
    const change = (): void => {
      this.#last = undefined;
      requestSync();
    };
    const { policies, namespaces, pods } = this.#o.informers;
    const subs = [
      policies.on({ onAdd: change, onUpdate: change, onDelete: change }),
      namespaces.on({ onAdd: change, onUpdate: change, onDelete: change }),
      pods.on({
        onAdd: change,
        onUpdate: change,
        onDelete: (p) => {
          this.#admitted.delete(p.metadata.uid ?? '');
          change();
        },
      }),
    ];
    for (const i of [policies, namespaces, pods]) i.start();
    return () => {
      for (const s of subs) s.dispose();
      this.#requestSync = undefined;
    };
  }

  /** Resolves once every informer has listed (the proxy's first sync waits for it). */
  async waitForSync(signal: AbortSignal): Promise<void> {
    const { policies, namespaces, pods } = this.#o.informers;
    await Promise.all([policies.waitForSync(signal), namespaces.waitForSync(signal), pods.waitForSync(signal)]);
  }

  contribution(): TableContribution {
    if (this.#last) return this.#last;
    const { policies, namespaces } = this.#o.informers;
    this.#last = buildNetpolContribution({ policies: policies.list(), namespaces: namespaces.list(), pods: this.#pods(), nodeName: this.#o.nodeName, version: ++this.#version });
    return this.#last;
  }

  written(c: TableContribution): void {
    this.#live = c as NetpolContribution;
    for (const w of [...this.#waiters]) w();
  }

  /**
   * Resolves once the pod's IPs are in the live table (called after the sandbox is made and
   * before any container starts). Returns at once for host-network pods and when no policy of
   * the pod's namespace exists (none can isolate it; a policy elsewhere naming it as a peer
   * fails closed until its IP is programmed). ERR_UNAVAILABLE (retryable) after the timeout.
   */
  async admit(pod: Pod, ips: readonly string[], signal: AbortSignal): Promise<void> {
    const v4 = ips.filter((ip) => isIPv4(ip));
    if (pod.spec?.hostNetwork || !v4.length) return;
    const uid = pod.metadata.uid ?? '';
    const ns = pod.metadata.namespace ?? 'default';
    // Already live (a container restart, a later sync of a running pod): nothing to hand over.
    const current = this.#live;
    if (current && v4.every((ip) => current.localIPs.has(ip))) return;
    const had = this.#admitted.get(uid);
    if (had?.ips.join() !== v4.join()) {
      this.#admitted.set(uid, { pod, ips: v4 });
      this.#last = undefined;
      this.#requestSync?.();
    }
    const nsPrefix = `${ns}/`;
    const done = (): boolean => {
      const live = this.#live;
      if (live && v4.every((ip) => live.localIPs.has(ip))) return true;
      // No policy of the namespace is known or live: none can isolate the pod.
      const policies = this.#o.informers.policies;
      return policies.hasSynced() && !policies.list().some((p) => (p.metadata.namespace ?? 'default') === ns) && ![...(live?.policyKeys ?? [])].some((k) => k.startsWith(nsPrefix));
    };
    if (done()) return;
    const timeoutMs = this.#o.admitTimeoutMs ?? 30_000;
    await new Promise<void>((resolve, reject) => {
      const finish = (err?: Error): void => {
        this.#waiters.delete(check);
        signal.removeEventListener('abort', onAbort);
        cancelTimer();
        if (err) reject(err);
        else resolve();
      };
      const check = (): void => {
        if (done()) finish();
      };
      const onAbort = (): void => finish(abortError(signal.reason));
      const cancelTimer = this.#o.clock.setTimer(timeoutMs, () =>
        finish(new AgentError('ERR_UNAVAILABLE', `network policy rules for pod "${ns}/${pod.metadata.name ?? ''}" were not programmed within ${timeoutMs / 1000}s`, { retryable: true })),
      );
      this.#waiters.add(check);
      signal.addEventListener('abort', onAbort, { once: true });
      if (signal.aborted) onAbort();
    });
  }

  /** Informer pods, with the admitted IPs of local pods whose status has none yet. */
  #pods(): Pod[] {
    const out: Pod[] = [];
    const seen = new Set<string>();
    const withIPs = (p: Pod, ips: string[]): Pod => ({ ...p, spec: { ...p.spec!, nodeName: this.#o.nodeName }, status: { ...p.status, podIPs: ips.map((ip) => ({ ip })) } });
    for (const p of this.#o.informers.pods.list()) {
      const uid = p.metadata.uid ?? '';
      seen.add(uid);
      const a = this.#admitted.get(uid);
      if (!a) out.push(p);
      else if (podIPv4s(p).length) {
        // The API has the address now; the runtime's copy is no longer needed.
        this.#admitted.delete(uid);
        out.push(p);
      } else out.push(withIPs(p, a.ips));
    }
    for (const [uid, a] of this.#admitted) if (!seen.has(uid)) out.push(withIPs(a.pod, a.ips));
    return out;
  }
}
