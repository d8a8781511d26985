/**
 * Strategies of v1 ReplicationController (status and scale like a ReplicaSet's; the selector may
 * change, as upstream) and PodTemplate.
 */
import { defaultPodTemplate, defaultReplicationController, validatePodTemplate, validateReplicationController } from '@nodelet/api';
import type { Strategy } from '../resource.js';

export const replicationControllerStrategy: Strategy = {
  defaults: (obj) => defaultReplicationController(obj),
  prepareForCreate(obj) {
    obj.status = {};
  },
  validate: (obj) => validateReplicationController(obj),
};

export const podTemplateStrategy: Strategy = {
  defaults: (obj) => defaultPodTemplate(obj),
  validate: (obj) => validatePodTemplate(obj),
};
