/** Strategies of the remaining kinds: namespaces, nodes, services, workloads, secrets. */
import {
  configMapKeyProblems,
  defaultDeploymentSpec,
  defaultReplicaSetSpec,
  defaultServiceSpec,
  invalidValue,
  required,
  tooLong,
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
    if (spec && oldSpec && spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local' && !spec.healthCheckNodePort && oldSpec.healthCheckNodePort) {
      spec.healthCheckNodePort = oldSpec.healthCheckNodePort;
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
    let size = 0;
    for (const [k, v] of Object.entries((obj.data ?? {}) as Json)) {
      errs.push(...keyErrors('data', k));
      if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v)) errs.push(invalidValue(`data[${k}]`, '<value>', 'must be base64 encoded'));
      else size += base64Bytes(v);
    }
    if (size > MAX_SECRET_SIZE) errs.push(tooLong('data', MAX_SECRET_SIZE));
    // upstream ValidateSecret: a legacy token Secret must name its account (the token controller fills it from that).
    if (obj.type === 'kubernetes.io/service-account-token' && !obj.metadata.annotations?.['kubernetes.io/service-account.name']) {
      errs.push(required('metadata.annotations[kubernetes.io/service-account.name]'));
    }
    return errs;
  },
};

/**
 * core.MaxSecretSize: what a Secret's data, or a ConfigMap's data and binaryData together, may
 * hold (decoded bytes). Upstream's reason is etcd's request limit; here it also bounds what a
 * pod's volume and every watcher of the kind receive.
 */
export const MAX_SECRET_SIZE = 1024 * 1024;

/** Decoded length of a (valid) base64 string, without decoding it. */
function base64Bytes(v: string): number {
  const padding = v.endsWith('==') ? 2 : v.endsWith('=') ? 1 : 0;
  return Math.floor((v.length * 3) / 4) - padding;
}

/** Data keys become file names in secret/configMap volumes (validation.IsConfigMapKey). */
function keyErrors(map: string, key: string): FieldError[] {
  return configMapKeyProblems(key).map((why) => invalidValue(`${map}[${key}]`, key, why));
}

export const configMapStrategy: Strategy = {
  validate(obj) {
    const errs: FieldError[] = [];
    let size = 0;
    for (const [k, v] of Object.entries((obj.data ?? {}) as Json)) {
      errs.push(...keyErrors('data', k));
      if (typeof v !== 'string') errs.push(invalidValue(`data[${k}]`, v, 'must be a string'));
      else size += Buffer.byteLength(v, 'utf8');
    }
    for (const [k, v] of Object.entries((obj.binaryData ?? {}) as Json)) {
      errs.push(...keyErrors('binaryData', k));
      if (isPlainObject(obj.data) && k in obj.data) errs.push(invalidValue(`binaryData[${k}]`, k, 'duplicate of key present in data'));
      if (typeof v === 'string') size += base64Bytes(v);
    }
    // Upstream reports the whole object (an empty field path).
    if (size > MAX_SECRET_SIZE) errs.push(tooLong('', MAX_SECRET_SIZE));
    return errs;
  },
};

export const plainStrategy: Strategy = {};
