/**
 * Pod defaulting as kube-apiserver does it (k8s.io/kubernetes/pkg/apis/core/v1/defaults.go):
 * applied on create and on every update so stored pods always carry the defaults kubelet reads.
 * Mutates in place; idempotent.
 */
type Obj = Record<string, unknown>;

export function defaultPodSpec(spec: Obj): void {
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  if (spec.serviceAccountName === undefined && typeof spec.serviceAccount === 'string') spec.serviceAccountName = spec.serviceAccount;
  for (const list of ['containers', 'initContainers']) {
    const cs = spec[list];
    if (Array.isArray(cs)) for (const c of cs) if (c && typeof c === 'object') defaultContainer(c as Obj);
  }
  if (Array.isArray(spec.volumes)) {
    for (const v of spec.volumes as Obj[]) {
      if (!v || typeof v !== 'object') continue;
      const cm = v.configMap as Obj | undefined;
      if (cm) cm.defaultMode ??= 0o644;
      const secret = v.secret as Obj | undefined;
      if (secret) secret.defaultMode ??= 0o644;
    }
  }
}

/**
 * What kube-apiserver's admission adds to a new Pod (not to pod templates): the ServiceAccount
 * plugin's `default` account (not for mirror pods, which the plugin leaves alone: a node may not
 * create pods that reference a service account). The Priority plugin's priority and preemption
 * policy are the server's Priority admission (control-plane admission/priority.ts): it must see
 * what the client set.
 */
export function admitNewPodSpec(spec: Obj, o: { mirror?: boolean } = {}): void {
  if (!o.mirror) {
    spec.serviceAccountName ??= 'default';
    spec.serviceAccount ??= spec.serviceAccountName;
  }
}

/**
 * Upstream SetDefaults_Pod (for Pods, not templates): a container (or init container) that sets
 * a limit and no request for a resource requests its limit.
 */
export function defaultRequestsFromLimits(spec: Obj): void {
  for (const list of ['containers', 'initContainers']) {
    const cs = Array.isArray(spec[list]) ? (spec[list] as Obj[]) : [];
    for (const c of cs) {
      const res = (c.resources ?? {}) as Obj;
      const limits = (res.limits ?? {}) as Record<string, unknown>;
      if (!Object.keys(limits).length) continue;
      const requests = (res.requests ?? {}) as Record<string, unknown>;
      for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
      res.requests = requests;
      c.resources = res;
    }
  }
}

export function defaultContainer(c: Obj): void {
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.imagePullPolicy ??= pullPolicyFor(typeof c.image === 'string' ? c.image : '');
  c.resources ??= {};
  if (Array.isArray(c.ports)) for (const p of c.ports as Obj[]) p.protocol ??= 'TCP';
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) {
    const p = c[probe] as Obj | undefined;
    if (!p) continue;
    p.timeoutSeconds ??= 1;
    p.periodSeconds ??= 10;
    p.successThreshold ??= 1;
    p.failureThreshold ??= 3;
    const http = p.httpGet as Obj | undefined;
    if (http) {
      http.path ??= '/';
      http.scheme ??= 'HTTP';
    }
  }
}

/** `Always` for `:latest` or untagged images, `IfNotPresent` otherwise (digests count as tagged). */
export function pullPolicyFor(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const tail = image.slice(lastSlash + 1);
  const colon = tail.lastIndexOf(':');
  if (colon < 0) return 'Always';
  return tail.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}
