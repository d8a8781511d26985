/**
 * Service environment variables (kubelet getServiceEnvVarMap + envvars.FromServices): every pod
 * gets the `kubernetes` Service of the default namespace as KUBERNETES_SERVICE_HOST/_PORT and
 * its Docker-link-style KUBERNETES_PORT* variables — what in-cluster clients read — and, when
 * `enableServiceLinks` is true (the default), the same for every Service of its own namespace:
 *
 *   WEB_SERVICE_HOST=10.96.0.20      WEB_SERVICE_PORT=80          WEB_SERVICE_PORT_HTTP=80
 *   WEB_PORT=tcp://10.96.0.20:80     WEB_PORT_80_TCP=tcp://10.96.0.20:80
 *   WEB_PORT_80_TCP_PROTO=tcp        WEB_PORT_80_TCP_PORT=80      WEB_PORT_80_TCP_ADDR=10.96.0.20
 *
 * Only Services with a ClusterIP (not headless, not ExternalName). Pure.
 */
import type { Service } from '@nodelet/api/agent';

const envName = (s: string): string => s.toUpperCase().replace(/-/g, '_');

function varsOf(svc: Service, out: Map<string, string>): void {
  const ip = svc.spec?.clusterIP;
  if (!ip || ip === 'None') return;
  const name = envName(svc.metadata.name ?? '');
  const ports = svc.spec?.ports ?? [];
  out.set(`${name}_SERVICE_HOST`, ip);
  if (ports[0]) out.set(`${name}_SERVICE_PORT`, String(ports[0].port));
  for (const p of ports) if (p.name) out.set(`${name}_SERVICE_PORT_${envName(p.name)}`, String(p.port));
  if (ports[0]) out.set(`${name}_PORT`, `${(ports[0].protocol ?? 'TCP').toLowerCase()}://${ip}:${ports[0].port}`);
  for (const p of ports) {
    const proto = (p.protocol ?? 'TCP').toLowerCase();
    const prefix = `${name}_PORT_${p.port}_${proto.toUpperCase()}`;
    out.set(prefix, `${proto}://${ip}:${p.port}`);
    out.set(`${prefix}_PROTO`, proto);
    out.set(`${prefix}_PORT`, String(p.port));
    out.set(`${prefix}_ADDR`, ip);
  }
}

/** The service variables of a pod in `namespace` (`services` = that namespace's, `master` = default/kubernetes). */
export function serviceEnvVars(o: { namespace: string; enableServiceLinks: boolean; services: readonly Service[]; master?: Service }): Map<string, string> {
  const out = new Map<string, string>();
  if (o.enableServiceLinks) {
    // Sorted by name, so a name clash resolves the same way every time.
    const mine = [...o.services].filter((s) => s.metadata.namespace === o.namespace).sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    for (const s of mine) {
      // The master service's variables come from default/kubernetes, never from a namesake elsewhere.
      if (s.metadata.name === 'kubernetes' && o.namespace !== 'default') continue;
      varsOf(s, out);
    }
  }
  if (o.master) varsOf(o.master, out);
  return out;
}
