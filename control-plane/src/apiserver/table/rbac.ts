/** Table printers of the RBAC kinds, with kubectl's columns (pkg/printers/internalversion). */
import type { Subject } from '@nodelet/api';
import type { ApiObject } from '../object.js';
import type { TablePrinter } from '../resource.js';
import { AGE_COLUMN, age, col, humanDuration, kindTable, NAME_COLUMN } from './format.js';

const CREATED_AT = col('Created At', 'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.', 0, 'date');

export const ROLE_TABLE: TablePrinter = {
  columns: [NAME_COLUMN, CREATED_AT],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp ?? '<unknown>'],
};

function subjectsOf(o: ApiObject): { users: string; groups: string; sas: string } {
  const subs = (o.subjects ?? []) as Subject[];
  const pick = (kind: string, fmt: (s: Subject) => string): string => subs.filter((s) => s.kind === kind).map(fmt).join(', ');
  return { users: pick('User', (s) => s.name), groups: pick('Group', (s) => s.name), sas: pick('ServiceAccount', (s) => `${s.namespace ?? ''}/${s.name}`) };
}

export const ROLEBINDING_TABLE = kindTable({
  columns: [col('Role', 'RoleRef is the reference to the role that the binding refers to.')],
  afterAge: [col('Users', 'Users in the binding.', 1), col('Groups', 'Groups in the binding.', 1), col('ServiceAccounts', 'ServiceAccounts in the binding.', 1)],
  cells: (o) => {
    const ref = (o.roleRef ?? {}) as { kind?: string; name?: string };
    const s = subjectsOf(o);
    return [`${ref.kind ?? ''}/${ref.name ?? ''}`, s.users, s.groups, s.sas];
  },
});

/** kubectl get csr: NAME AGE SIGNERNAME REQUESTOR REQUESTEDDURATION CONDITION. */
export const CSR_TABLE: TablePrinter = {
  columns: [
    NAME_COLUMN,
    AGE_COLUMN,
    col('SignerName', 'Only one signer name should be specified.'),
    col('Requestor', 'Name of the user requesting the certificate.'),
    col('RequestedDuration', 'Requested duration of the certificate.'),
    col('Condition', 'Current status of the certificate request.'),
  ],
  cells: (o, now) => {
    const spec = (o.spec ?? {}) as { signerName?: string; username?: string; expirationSeconds?: number };
    const status = (o.status ?? {}) as { conditions?: Array<{ type: string; status?: string }>; certificate?: string };
    const conds = (status.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type);
    if (status.certificate) conds.push('Issued');
    return [o.metadata.name, age(o, now), spec.signerName ?? '', spec.username ?? '', spec.expirationSeconds ? humanDuration(spec.expirationSeconds * 1000) : '<none>', conds.length ? conds.join(',') : 'Pending'];
  },
};
