/** Strategies of the RBAC kinds: defaults and validation (escalation checks are admission: auth/rbac/escalation.ts). */
import { defaultSubjects, invalidValue, validatePolicyRules, validateRoleRef, validateSubjects, type FieldError, type RoleRef } from '@nodelet/api';
import { jsonEqual, type ApiObject } from '../object.js';
import type { Strategy } from '../resource.js';

export const roleStrategy: Strategy = {
  validate: (obj) => validatePolicyRules(obj.rules, 'rules', false),
};

export const clusterRoleStrategy: Strategy = {
  validate: (obj) => validatePolicyRules(obj.rules, 'rules', true),
};

function bindingStrategy(cluster: boolean): Strategy {
  return {
    defaults(obj) {
      defaultSubjects(obj.subjects);
    },
    validate(obj: ApiObject, old?: ApiObject): FieldError[] {
      const errs = [...validateRoleRef(obj.roleRef as RoleRef | undefined, cluster), ...validateSubjects(obj.subjects, cluster)];
      if (old && !jsonEqual(obj.roleRef, old.roleRef)) errs.push(invalidValue('roleRef', obj.roleRef, 'cannot change roleRef'));
      return errs;
    },
  };
}

export const roleBindingStrategy = bindingStrategy(false);
export const clusterRoleBindingStrategy = bindingStrategy(true);
