/**
 * Validation and defaults of rbac.authorization.k8s.io/v1 objects (upstream
 * pkg/apis/rbac/validation and v1 defaults), shared by the API server and clients.
 */
import type { PolicyRule, RoleRef, Subject } from '../types/rbac.js';
import { RBAC_GROUP } from '../types/rbac.js';
import { forbiddenField, invalidValue, notSupported, required, type FieldError } from './field-error.js';
import { pathSegmentNameProblem } from './names.js';

/** `rules[i]`: verbs required; resource rules need apiGroups + resources; non-resource URLs only cluster-wide. */
export function validatePolicyRules(rules: unknown, path: string, clusterScoped: boolean): FieldError[] {
  if (rules === undefined || rules === null) return [];
  if (!Array.isArray(rules)) return [invalidValue(path, rules, 'must be a list of rules')];
  const errs: FieldError[] = [];
  rules.forEach((r: PolicyRule, i) => {
    const p = `${path}[${i}]`;
    if (!r || typeof r !== 'object') return void errs.push(invalidValue(p, r, 'must be an object'));
    if (!Array.isArray(r.verbs) || r.verbs.length === 0) errs.push(required(`${p}.verbs`, 'Required value: verbs must contain at least one value'));
    const urls = r.nonResourceURLs ?? [];
    const isResourceRule = (r.apiGroups?.length ?? 0) > 0 || (r.resources?.length ?? 0) > 0 || (r.resourceNames?.length ?? 0) > 0;
    if (urls.length > 0) {
      if (!clusterScoped) errs.push(invalidValue(`${p}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
      if (isResourceRule) errs.push(invalidValue(`${p}.nonResourceURLs`, urls, 'rules cannot apply to both regular resources and non-resource URLs'));
      return;
    }
    if (!r.apiGroups?.length) errs.push(required(`${p}.apiGroups`, 'Required value: resource rules must supply at least one api group'));
    if (!r.resources?.length) errs.push(required(`${p}.resources`, 'Required value: resource rules must supply at least one resource'));
  });
  return errs;
}

export function validateRoleRef(ref: RoleRef | undefined, inClusterBinding: boolean): FieldError[] {
  if (!ref || typeof ref !== 'object') return [required('roleRef')];
  const errs: FieldError[] = [];
  if (ref.apiGroup !== RBAC_GROUP) errs.push(notSupported('roleRef.apiGroup', ref.apiGroup ?? '', [RBAC_GROUP]));
  const kinds = inClusterBinding ? ['ClusterRole'] : ['Role', 'ClusterRole'];
  if (!kinds.includes(ref.kind)) errs.push(notSupported('roleRef.kind', ref.kind ?? '', kinds));
  if (!ref.name) errs.push(required('roleRef.name'));
  else {
    const problem = pathSegmentNameProblem(ref.name);
    if (problem) errs.push(invalidValue('roleRef.name', ref.name, problem));
  }
  return errs;
}

export function validateSubjects(subjects: unknown, inClusterBinding: boolean): FieldError[] {
  if (subjects === undefined || subjects === null) return [];
  if (!Array.isArray(subjects)) return [invalidValue('subjects', subjects, 'must be a list')];
  const errs: FieldError[] = [];
  subjects.forEach((s: Subject, i) => {
    const p = `subjects[${i}]`;
    if (!s || typeof s !== 'object') return void errs.push(invalidValue(p, s, 'must be an object'));
    if (!s.name) errs.push(required(`${p}.name`));
    switch (s.kind) {
      case 'ServiceAccount':
        if (s.apiGroup) errs.push(notSupported(`${p}.apiGroup`, s.apiGroup, ['']));
        if (!s.namespace && inClusterBinding) errs.push(required(`${p}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (s.apiGroup !== RBAC_GROUP) errs.push(notSupported(`${p}.apiGroup`, s.apiGroup ?? '', [RBAC_GROUP]));
        if (s.namespace) errs.push(forbiddenField(`${p}.namespace`, 'namespace is only allowed for ServiceAccount subjects'));
        break;
      default:
        errs.push(notSupported(`${p}.kind`, s.kind ?? '', ['ServiceAccount', 'User', 'Group']));
    }
  });
  return errs;
}

/** User and Group subjects default to the rbac.authorization.k8s.io apiGroup (upstream SetDefaults_Subject). */
export function defaultSubjects(subjects: unknown): void {
  if (!Array.isArray(subjects)) return;
  for (const s of subjects as Subject[]) {
    if (s && typeof s === 'object' && !s.apiGroup && (s.kind === 'User' || s.kind === 'Group')) s.apiGroup = RBAC_GROUP;
  }
}
