/**
 * The DefaultIngressClass admission plugin (plugin/pkg/admission/network/defaultingressclass): a new
 * Ingress naming no class (neither `spec.ingressClassName` nor the deprecated
 * `kubernetes.io/ingress.class` annotation) gets the default IngressClass, the one annotated
 * `ingressclass.kubernetes.io/is-default-class: "true"` (the newest when several are). Mutating.
 */
import { ANN_DEFAULT_INGRESS_CLASS, ANN_INGRESS_CLASS } from '@nodelet/api';
import { isPlainObject, type Json } from '../object.js';
import { MATCH_ALL } from '../filter.js';
import type { AdmissionPlugin } from './types.js';

export const defaultIngressClassAdmission: AdmissionPlugin = async (ctx, r) => {
  if (r.operation !== 'CREATE' || r.subresource || r.def.group !== 'networking.k8s.io' || r.def.plural !== 'ingresses' || !r.object) return;
  if (r.object.metadata.annotations?.[ANN_INGRESS_CLASS] !== undefined) return;
  if (!isPlainObject(r.object.spec)) r.object.spec = {};
  const spec = r.object.spec as Json;
  if (spec.ingressClassName !== undefined && spec.ingressClassName !== null) return;
  const classes = ctx.resource('networking.k8s.io', 'v1', 'ingressclasses');
  if (!classes) return;
  const defaults = (await classes.registry.list({ filter: MATCH_ALL })).items
    .filter((c) => c.metadata.annotations?.[ANN_DEFAULT_INGRESS_CLASS] === 'true')
    .sort((a, b) => Date.parse(b.metadata.creationTimestamp ?? '') - Date.parse(a.metadata.creationTimestamp ?? '') || String(a.metadata.name).localeCompare(String(b.metadata.name)));
  if (defaults[0]) spec.ingressClassName = defaults[0].metadata.name;
};
