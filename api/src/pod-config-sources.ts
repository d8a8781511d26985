/**
 * The ConfigMaps and Secrets a pod reads — env, envFrom, volumes, projected sources, image pull
 * secrets — walked in one place: the agent watches exactly these (agent/src/source/
 * watched-objects.ts) and the API server's Node authorizer lets a node read exactly these
 * (control-plane/src/apiserver/auth/node-authorizer.ts).
 */
export type ConfigSourceKind = 'configmap' | 'secret';

interface SpecSources {
  containers?: ContainerSources[];
  initContainers?: ContainerSources[];
  ephemeralContainers?: ContainerSources[];
  volumes?: Array<{ secret?: { secretName?: string }; configMap?: { name?: string }; projected?: { sources?: Array<{ secret?: { name?: string }; configMap?: { name?: string } }> } }>;
  imagePullSecrets?: Array<{ name?: string }>;
}
interface ContainerSources {
  env?: Array<{ valueFrom?: { secretKeyRef?: { name?: string }; configMapKeyRef?: { name?: string } } }>;
  envFrom?: Array<{ secretRef?: { name?: string }; configMapRef?: { name?: string } }>;
}

/** Every (kind, name) a pod references, in spec order; a name may repeat. */
export function podConfigSources(pod: object): Array<[ConfigSourceKind, string]> {
  const spec = ((pod as { spec?: unknown }).spec ?? {}) as SpecSources;
  const out: Array<[ConfigSourceKind, string]> = [];
  const add = (kind: ConfigSourceKind, name?: string): void => void (name && out.push([kind, name]));
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? []), ...(spec.ephemeralContainers ?? [])]) {
    for (const e of c.env ?? []) {
      add('configmap', e.valueFrom?.configMapKeyRef?.name);
      add('secret', e.valueFrom?.secretKeyRef?.name);
    }
    for (const e of c.envFrom ?? []) {
      add('configmap', e.configMapRef?.name);
      add('secret', e.secretRef?.name);
    }
  }
  for (const v of spec.volumes ?? []) {
    add('configmap', v.configMap?.name);
    add('secret', v.secret?.secretName);
    for (const s of v.projected?.sources ?? []) {
      add('configmap', s.configMap?.name);
      add('secret', s.secret?.name);
    }
  }
  for (const s of spec.imagePullSecrets ?? []) add('secret', s.name);
  return out;
}
