/**
 * Admission of CertificateSigningRequests (kube-apiserver's CertificateApproval,
 * CertificateSigning and CertificateSubjectRestriction plugins, plus the requester identity the
 * CSR registry records):
 *
 *   create             spec.username/uid/groups/extra := the requester (whatever the body said);
 *                      kubernetes.io/kube-apiserver-client may not issue O=system:masters
 *   /approval update   changing Approved/Denied needs `approve` on signers "<signerName>" (or "<domain>/*")
 *   /status update     setting the certificate needs `sign` on signers "<signerName>" (or "<domain>/*")
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { SIGNER_KUBE_APISERVER_CLIENT } from '@nodelet/api';
import { forbidden } from '../status.js';
import { jsonEqual, type ApiObject, type Json } from '../object.js';
import type { AdmissionPlugin } from './types.js';

x509.cryptoProvider.set(webcrypto as never);

const GROUP = 'certificates.k8s.io';

export const certificateAdmission: AdmissionPlugin = async (ctx, r) => {
  if (r.def.group !== GROUP || r.def.plural !== 'certificatesigningrequests' || !r.object) return;
  const spec = (r.object.spec ?? {}) as Json;
  const signer = String(spec.signerName ?? '');
  const refuse = (why: string): never => {
    throw forbidden(`certificatesigningrequests.${GROUP} "${r.name ?? ''}" is forbidden: ${why}`);
  };
  const permitted = async (verb: 'approve' | 'sign'): Promise<boolean> => {
    for (const name of [signer, `${signer.split('/')[0]}/*`]) {
      if ((await ctx.authorizer.authorize(r.user, { verb, group: GROUP, resource: 'signers', name })).allowed) return true;
    }
    return false;
  };

  if (r.operation === 'CREATE') {
    spec.username = r.user.name;
    spec.groups = [...r.user.groups];
    if (r.user.uid) spec.uid = r.user.uid;
    else delete spec.uid;
    if (r.user.extra) spec.extra = { ...r.user.extra };
    else delete spec.extra;
    if (signer === SIGNER_KUBE_APISERVER_CLIENT && typeof spec.request === 'string') {
      const req = new x509.Pkcs10CertificateRequest(Buffer.from(spec.request, 'base64').toString('utf8'));
      if (new x509.Name(req.subject).toJSON().some((rdn) => (rdn.O ?? []).includes('system:masters'))) {
        refuse(`use of ${SIGNER_KUBE_APISERVER_CLIENT} signer with system:masters group is not allowed`);
      }
    }
    return;
  }
  if (r.operation !== 'UPDATE' || !r.oldObject) return;
  const approvals = (o: ApiObject): unknown => (((o.status as Json | undefined)?.conditions ?? []) as Array<{ type?: string }>).filter((c) => c.type === 'Approved' || c.type === 'Denied');
  if (r.subresource === 'approval' && !jsonEqual(approvals(r.object), approvals(r.oldObject)) && !(await permitted('approve'))) {
    refuse(`user not permitted to approve requests with signerName "${signer}"`);
  }
  const cert = (o: ApiObject): unknown => (o.status as Json | undefined)?.certificate;
  if (r.subresource === 'status' && cert(r.object) && !jsonEqual(cert(r.object), cert(r.oldObject)) && !(await permitted('sign'))) {
    refuse(`user not permitted to sign requests with signerName "${signer}"`);
  }
};
