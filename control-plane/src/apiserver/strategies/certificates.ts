/**
 * CertificateSigningRequest (certificates.k8s.io/v1) strategy, as kube-apiserver's:
 *
 *   create     status cleared; the requester's identity is set by admission (admission/certificates.ts)
 *   update     spec and status never change through the main resource
 *   /approval  only the Approved/Denied conditions change (and may not be withdrawn); the
 *              certificate is kept
 *   /status    the signer's certificate (once) and Failed conditions; Approved/Denied are kept
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { invalidValue, notSupported, required, type FieldError } from '@nodelet/api';
import { isPlainObject, jsonEqual, type ApiObject, type Json } from '../object.js';
import type { Strategy } from '../resource.js';

x509.cryptoProvider.set(webcrypto as never);

const USAGES = [
  'signing', 'digital signature', 'content commitment', 'key encipherment', 'key agreement', 'data encipherment', 'cert sign',
  'crl sign', 'encipher only', 'decipher only', 'any', 'server auth', 'client auth', 'code signing', 'email protection', 's/mime',
  'ipsec end system', 'ipsec tunnel', 'ipsec user', 'timestamping', 'ocsp signing', 'microsoft sgc', 'netscape sgc',
];
const SIGNER_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+\/[-._~%!$&'()*+,;=:A-Za-z0-9]+(\/[-._~%!$&'()*+,;=:A-Za-z0-9]+)*$/;

type Condition = { type?: string; status?: string };
const conditionsOf = (o: ApiObject): Condition[] => (((o.status as Json | undefined)?.conditions ?? []) as Condition[]);
const isApprovalCondition = (c: Condition): boolean => c.type === 'Approved' || c.type === 'Denied';

export const certificateSigningRequestStrategy: Strategy = {
  prepareForCreate(obj) {
    obj.status = {};
  },
  prepareForUpdate(obj, old) {
    obj.spec = old.spec;
    obj.status = old.status;
  },
  prepareForSubresourceUpdate(sub, obj, old) {
    obj.spec = old.spec;
    const next = (obj.status ?? {}) as Json;
    const prev = (old.status ?? {}) as Json;
    if (sub === 'approval') {
      obj.status = { ...prev, conditions: [...conditionsOf(obj).filter(isApprovalCondition), ...conditionsOf(old).filter((c) => !isApprovalCondition(c))] };
    } else {
      obj.status = { ...next, conditions: [...conditionsOf(old).filter(isApprovalCondition), ...conditionsOf(obj).filter((c) => !isApprovalCondition(c))] };
    }
  },
  validate(obj, old): FieldError[] {
    const errs: FieldError[] = [];
    const spec = (isPlainObject(obj.spec) ? obj.spec : {}) as Json;
    if (typeof spec.request !== 'string' || spec.request === '') errs.push(required('spec.request'));
    else if (!old) {
      try {
        new x509.Pkcs10CertificateRequest(Buffer.from(spec.request, 'base64').toString('utf8'));
      } catch {
        errs.push(invalidValue('spec.request', '<request>', 'must be a base64-encoded PEM block of type CERTIFICATE REQUEST'));
      }
    }
    if (typeof spec.signerName !== 'string' || spec.signerName === '') errs.push(required('spec.signerName'));
    else if (!SIGNER_NAME.test(spec.signerName)) errs.push(invalidValue('spec.signerName', spec.signerName, "must be a fully qualified domain and path of the form 'example.com/signer-name'"));
    if (!Array.isArray(spec.usages) || spec.usages.length === 0) errs.push(required('spec.usages'));
    else spec.usages.forEach((u, i) => USAGES.includes(u as string) || errs.push(notSupported(`spec.usages[${i}]`, u, USAGES)));
    if (spec.expirationSeconds !== undefined && (!Number.isInteger(spec.expirationSeconds) || (spec.expirationSeconds as number) < 600)) {
      errs.push(invalidValue('spec.expirationSeconds', spec.expirationSeconds, 'may not specify a duration less than 600 seconds (10 minutes)'));
    }
    const conds = conditionsOf(obj);
    const approved = conds.some((c) => c.type === 'Approved' && c.status === 'True');
    const denied = conds.some((c) => c.type === 'Denied' && c.status === 'True');
    if (approved && denied) errs.push(invalidValue('status.conditions', 'Approved,Denied', 'Approved and Denied conditions are mutually exclusive'));
    if (old) {
      const was = conditionsOf(old);
      for (const t of ['Approved', 'Denied']) {
        if (was.some((c) => c.type === t && c.status === 'True') && !conds.some((c) => c.type === t && c.status === 'True')) {
          errs.push({ type: 'FieldValueForbidden', field: 'status.conditions', message: `Forbidden: updates may not remove a condition of type "${t}"` });
        }
      }
      const cert = (old.status as Json | undefined)?.certificate;
      if (cert && !jsonEqual(cert, (obj.status as Json | undefined)?.certificate)) errs.push({ type: 'FieldValueForbidden', field: 'status.certificate', message: 'Forbidden: updates may not modify existing certificate content' });
    }
    return errs;
  },
};
