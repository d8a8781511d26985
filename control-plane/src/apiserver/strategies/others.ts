/** Strategies of the remaining kinds: namespaces, nodes, services, workloads, secrets. */
import {
  configMapKeyProblems,
  defaultDeploymentSpec,
  defaultReplicaSetSpec,
  defaultServiceSpec,
  invalidValue,
  validateReplicatedSpec,
  validateServiceSpec,
  type FieldError,
} from '@nodelet/api';
import { isPlainObject, type ApiObject, type Json } from '../object.js';
import type { Strategy } from '../resource.js';

export const namespaceStrategy: Strategy = {
  defaults(obj) {
    // The apiserver labels every namespace with its own name (NamespaceDefaultLabelName).
    obj.metadata.labels = { ...(obj.metadata.labels ?? {}), 'kubernetes.io/metadata.name': obj.metadata.name ?? '' };
    const spec = (obj.spec ??= {}) as Json;
    spec.finalizers ??= ['kubernetes'];
  },
  prepareForCreate(obj) {
    obj.status = { phase: 'Active' };
  },
};

export const nodeStrategy: Strategy = {
  // Nodes keep the status they are registered with (the agent creates its Node with status).
  validate(obj, old) {
    const errs: FieldError[] = [];
    // kube-apiserver's ValidateNodeUpdate: a pod CIDR, once set, is the node's for good.
    const cidr = (obj.spec as Json | undefined)?.podCIDR;
    const oldCidr = (old?.spec as Json | undefined)?.podCIDR;
    if (old && oldCidr && cidr !== oldCidr) {
      errs.push({ type: 'FieldValueForbidden', field: 'spec.podCIDRs', message: 'Forbidden: node updates may not change podCIDR except from "" to valid' });
    }
    const taints = (obj.spec as Json | undefined)?.taints;
    if (Array.isArray(taints)) {
      taints.forEach((t: Json, i) => {
        if (!['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(t?.effect as string)) {
          errs.push(invalidValue(`spec.taints[${i}].effect`, t?.effect, 'must be one of NoSchedule, PreferNoSchedule, NoExecute'));
        }
      });
    }
    return errs;
  },
};

export const serviceStrategy: Strategy = {
  defaults(obj) {
    if (isPlainObject(obj.spec)) defaultServiceSpec(obj.spec);
  },
  prepareForCreate(obj) {
    obj.status = { loadBalancer: {} };
  },
  prepareForUpdate(obj, old) {
    const spec = obj.spec as Json | undefined;
    const oldSpec = old.spec as Json | undefined;
    if (spec && oldSpec && !spec.clusterIP && oldSpec.clusterIP) {
      spec.clusterIP = oldSpec.clusterIP;
      spec.clusterIPs = oldSpec.clusterIPs;
    }
    // Allocated nodePorts survive a replace/apply that does not mention them.
    const oldPorts = (Array.isArray(oldSpec?.ports) ? oldSpec!.ports : []) as Json[];
    if (spec && Array.isArray(spec.ports) && (spec.type === 'NodePort' || spec.type === 'LoadBalancer')) {
      for (const p of spec.ports as Json[]) {
        if (p.nodePort) continue;
        const prev = oldPorts.find((o) => o.port === p.port && (o.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
        if (prev?.nodePort) p.nodePort = prev.nodePort;
      }
    }
  },
  validate(obj, old) {
    const errs = validateServiceSpec(obj.spec);
    const ip = (obj.spec as Json | undefined)?.clusterIP;
    const oldIp = (old?.spec as Json | undefined)?.clusterIP;
    if (old && oldIp && ip !== oldIp) errs.push(invalidValue('spec.clusterIP', ip, 'field is immutable'));
    return errs;
  },
};

function replicated(defaults: (spec: Json) => void): Strategy {
  return {
    defaults(obj) {
      if (isPlainObject(obj.spec)) defaults(obj.spec);
    },
    prepareForCreate(obj) {
      obj.status = {};
    },
    validate(obj: ApiObject, old?: ApiObject) {
      const errs = validateReplicatedSpec(obj.spec);
      const sel = (obj.spec as Json | undefined)?.selector;
      const oldSel = (old?.spec as Json | undefined)?.selector;
      if (old && JSON.stringify(sel) !== JSON.stringify(oldSel)) errs.push(invalidValue('spec.selector', sel, 'field is immutable'));
      return errs;
    },
  };
}
export const deploymentStrategy = replicated(defaultDeploymentSpec);
export const replicaSetStrategy = replicated(defaultReplicaSetSpec);

export const secretStrategy: Strategy = {
  defaults(obj) {
    obj.type ??= 'Opaque';
    // stringData is write-only: merged into data (base64) and never stored.
    if (isPlainObject(obj.stringData)) {
      const data = (obj.data ??= {}) as Record<string, string>;
      for (const [k, v] of Object.entries(obj.stringData)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
      delete obj.stringData;
    }
  },
  validate(obj) {
    const errs: FieldError[] = [];
    if (obj.data !== undefined && !isPlainObject(obj.data)) errs.push(invalidValue('data', obj.data, 'must be a map'));
    for (const [k, v] of Object.entries((obj.data ?? {}) as Json)) {
      errs.push(...keyErrors('data', k));
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) errs.push(invalidValue(`data[${k}]`, '<value>', 'must be base64 encoded'));
    }
    return errs;
  },
};

/** Data keys become file names in secret/configMap volumes (validation.IsConfigMapKey). */
function keyErrors(map: string, key: string): FieldError[] {
  return configMapKeyProblems(key).map((why) => invalidValue(`${map}[${key}]`, key, why));
}

export const configMapStrategy: Strategy = {
  validate(obj) {
    const errs: FieldError[] = [];
    for (const [k, v] of Object.entries((obj.data ?? {}) as Json)) {
      errs.push(...keyErrors('data', k));
      if (typeof v !== 'string') errs.push(invalidValue(`data[${k}]`, v, 'must be a string'));
    }
    for (const k of Object.keys((obj.binaryData ?? {}) as Json)) {
      errs.push(...keyErrors('binaryData', k));
      if (isPlainObject(obj.data) && k in obj.data) errs.push(invalidValue(`binaryData[${k}]`, k, 'duplicate of key present in data'));
    }
    return errs;
  },
};

export const plainStrategy: Strategy = {};
