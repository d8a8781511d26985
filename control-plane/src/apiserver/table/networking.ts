/**
 * Table printers of networking.k8s.io/v1 kinds with kubectl's columns: Ingress NAME CLASS HOSTS
 * ADDRESS PORTS AGE; IngressClass NAME CONTROLLER PARAMETERS AGE; NetworkPolicy NAME POD-SELECTOR AGE.
 */
import type { ApiObject } from '../object.js';
import { col, formatLabelSelector, get, kindTable } from './format.js';

type Obj = Record<string, unknown>;
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

/** The rules' hosts, at most three then `+ N more...`; `*` when no rule names one (upstream formatHosts). */
function hosts(o: ApiObject): string {
  const all = list(get(o, 'spec.rules')).map((r) => r.host).filter((h): h is string => typeof h === 'string' && h !== '');
  if (all.length === 0) return '*';
  return all.length > 3 ? `${all.slice(0, 3).join(',')} + ${all.length - 3} more...` : all.join(',');
}

function addresses(o: ApiObject): string {
  return list(get(o, 'status.loadBalancer.ingress'))
    .map((e) => (typeof e.ip === 'string' && e.ip ? e.ip : typeof e.hostname === 'string' ? e.hostname : ''))
    .filter(Boolean)
    .join(',');
}

export const INGRESS_TABLE = kindTable({
  columns: [
    col('Class', 'The IngressClass of the Ingress.'),
    col('Hosts', 'Hosts the rules name.'),
    col('Address', 'Addresses the controller serves the Ingress on.'),
    col('Ports', 'Ports of the Ingress: 80, and 443 with TLS.'),
  ],
  cells: (o) => {
    const cls = get(o, 'spec.ingressClassName');
    return [typeof cls === 'string' && cls ? cls : '<none>', hosts(o), addresses(o), list(get(o, 'spec.tls')).length ? '80, 443' : '80'];
  },
});

export const INGRESSCLASS_TABLE = kindTable({
  columns: [col('Controller', 'The controller serving Ingresses of the class.'), col('Parameters', 'The object configuring the controller.')],
  cells: (o) => {
    const p = get(o, 'spec.parameters') as Obj | undefined;
    const params = p ? `${String(p.kind)}${typeof p.apiGroup === 'string' && p.apiGroup ? `.${p.apiGroup}` : ''}/${String(p.name)}` : '<none>';
    return [String(get(o, 'spec.controller') ?? ''), params];
  },
});

export const NETWORKPOLICY_TABLE = kindTable({
  columns: [col('Pod-Selector', 'The pods the policy applies to.')],
  cells: (o) => [formatLabelSelector(get(o, 'spec.podSelector'))],
});
