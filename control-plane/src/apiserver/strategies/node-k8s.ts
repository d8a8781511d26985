/**
 * Strategy of node.k8s.io/v1 RuntimeClasses (pkg/registry/node/runtimeclass): validation and the
 * immutable `handler` (a running pod's sandbox was created with it).
 */
import { invalidValue, validateRuntimeClass } from '@nodelet/api';
import type { Strategy } from '../resource.js';

export const runtimeClassStrategy: Strategy = {
  validate(obj, old) {
    const errs = validateRuntimeClass(obj);
    if (old && obj.handler !== old.handler) errs.push(invalidValue('handler', obj.handler, 'field is immutable'));
    return errs;
  },
};
