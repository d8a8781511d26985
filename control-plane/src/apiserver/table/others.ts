/** Table printers for the remaining served kinds (columns as kubectl prints them for real clusters). */
import type { ApiObject, Json } from '../object.js';
import type { TablePrinter } from '../resource.js';
import { col, get, humanDuration, kindTable, orNone, WORKLOAD_COLUMNS, workloadCells } from './format.js';

const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

export const NAMESPACE_TABLE = kindTable({
  columns: [col('Status', 'The status of the namespace')],
  cells: (o) => [orNone(get(o, 'status.phase'))],
});

export const DEPLOYMENT_TABLE = kindTable({
  columns: [
    col('Ready', 'Number of the pod with ready state'),
    col('Up-to-date', 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', 0, 'integer'),
    col('Available', 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', 0, 'integer'),
  ],
  afterAge: WORKLOAD_COLUMNS,
  cells: (o) => [`${num(get(o, 'status.readyReplicas'))}/${num(get(o, 'spec.replicas'))}`, num(get(o, 'status.updatedReplicas')), num(get(o, 'status.availableReplicas')), ...workloadCells(o)],
});

export const REPLICASET_TABLE = kindTable({
  columns: [
    col('Desired', 'Replicas is the number of desired replicas.', 0, 'integer'),
    col('Current', 'Replicas is the most recently observed number of replicas.', 0, 'integer'),
    col('Ready', 'The number of ready replicas for this replica set.', 0, 'integer'),
  ],
  afterAge: WORKLOAD_COLUMNS,
  cells: (o) => [num(get(o, 'spec.replicas')), num(get(o, 'status.replicas')), num(get(o, 'status.readyReplicas')), ...workloadCells(o)],
});

function servicePorts(o: ApiObject): string {
  const ports = (get(o, 'spec.ports') ?? []) as Array<{ port?: number; protocol?: string; nodePort?: number }>;
  if (!ports.length) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

/**
 * The External-IP cell as kubectl's printer (getServiceExternalIP) writes it: a LoadBalancer's
 * ingress addresses then its externalIPs, `<pending>` until the load balancer assigned one.
 */
function serviceExternalIP(o: ApiObject, ext: readonly string[]): string {
  const type = get(o, 'spec.type');
  if (type === 'ExternalName') return orNone(get(o, 'spec.externalName'));
  if (type === 'LoadBalancer') {
    const ingress = ((get(o, 'status.loadBalancer.ingress') ?? []) as Array<{ ip?: string; hostname?: string }>).map((i) => i.ip || i.hostname || '').filter(Boolean);
    const all = [...ingress, ...ext];
    return all.length ? all.join(',') : '<pending>';
  }
  return ext.length ? ext.join(',') : '<none>';
}

export const SERVICE_TABLE = kindTable({
  columns: [
    col('Type', 'Type determines how the Service is exposed.'),
    col('Cluster-IP', 'ClusterIP is the IP address of the service.'),
    col('External-IP', 'List of IP addresses for which nodes in the cluster will also accept traffic for this service.'),
    col('Port(s)', 'The list of ports that are exposed by this service.'),
  ],
  afterAge: [col('Selector', 'Route service traffic to pods with label keys and values matching this selector.', 1)],
  cells: (o) => {
    const sel = (get(o, 'spec.selector') ?? {}) as Record<string, string>;
    const ext = (get(o, 'spec.externalIPs') ?? []) as string[];
    return [
      orNone(get(o, 'spec.type')),
      orNone(get(o, 'spec.clusterIP')),
      serviceExternalIP(o, ext),
      servicePorts(o),
      Object.keys(sel).length ? Object.entries(sel).map(([k, v]) => `${k}=${v}`).join(',') : '<none>',
    ];
  },
});

export const CONFIGMAP_TABLE = kindTable({
  columns: [col('Data', 'Data contains the configuration data.', 0, 'integer')],
  cells: (o) => [Object.keys((o.data ?? {}) as Json).length + Object.keys((o.binaryData ?? {}) as Json).length],
});

export const SECRET_TABLE = kindTable({
  columns: [col('Type', 'The type of the secret'), col('Data', 'The number of entries in the secret', 0, 'integer')],
  cells: (o) => [orNone(o.type), Object.keys((o.data ?? {}) as Json).length],
});

export const EVENT_TABLE: TablePrinter = {
  columns: [
    col('Last Seen', 'Time when last event was seen'),
    col('Type', 'Type of this event (Normal, Warning)'),
    col('Reason', 'Short, machine understandable string that gives the reason for this event.'),
    col('Object', 'The object that this event is about.'),
    col('Message', 'A human-readable description of the status of this operation.'),
  ],
  cells: (o, now) => {
    const last = (o.lastTimestamp ?? o.eventTime ?? o.metadata.creationTimestamp) as string | undefined;
    const kind = String(get(o, 'involvedObject.kind') ?? '').toLowerCase();
    return [
      last ? humanDuration(now - Date.parse(last)) : '<unknown>',
      orNone(o.type),
      orNone(o.reason),
      `${kind}/${String(get(o, 'involvedObject.name') ?? '')}`,
      String(o.message ?? ''),
    ];
  },
};

export const ENDPOINTS_TABLE = kindTable({
  columns: [col('Endpoints', 'Endpoints is the list of endpoints.')],
  cells: (o) => {
    const out: string[] = [];
    for (const s of (o.subsets ?? []) as Array<{ addresses?: Array<{ ip: string }>; ports?: Array<{ port: number }> }>) {
      for (const a of s.addresses ?? []) for (const p of s.ports ?? [{ port: 0 }]) out.push(p.port ? `${a.ip}:${p.port}` : a.ip);
    }
    const shown = out.slice(0, 3).join(',') + (out.length > 3 ? ` + ${out.length - 3} more...` : '');
    return [out.length ? shown : '<none>'];
  },
});

export const SERVICEACCOUNT_TABLE = kindTable({
  columns: [col('Secrets', 'Secrets', 0, 'integer')],
  cells: (o) => [((o.secrets ?? []) as unknown[]).length],
});

export const LEASE_TABLE = kindTable({
  columns: [col('Holder', 'HolderIdentity is the ID of the current holder of the lease.')],
  cells: (o) => [orNone(get(o, 'spec.holderIdentity'))],
});

export const ENDPOINTSLICE_TABLE = kindTable({
  columns: [col('AddressType', 'The IP protocol for this slice'), col('Ports', 'The ports for this slice'), col('Endpoints', 'The endpoints for this slice')],
  cells: (o) => {
    const ports = ((o.ports ?? []) as Array<{ port?: number }>).map((p) => String(p.port ?? '')).join(',');
    const addrs = ((o.endpoints ?? []) as Array<{ addresses?: string[] }>).flatMap((e) => e.addresses ?? []);
    return [orNone(o.addressType), ports || '<unset>', addrs.length ? addrs.slice(0, 3).join(',') : '<unset>'];
  },
});

/** For kinds without a printer: NAME AGE, as kube-apiserver's default table convertor. */
export const DEFAULT_TABLE = kindTable({ columns: [], cells: () => [] });
