/**
 * The CRI replies of the fake runtime, with every field filled in as a real client receives them
 * (proto3 defaults): the records keep the request's config as given, the views normalise it per call.
 */
import * as p from '@nodelet/proto';

/** An enum value as its name (requests may carry the number); `zero` when unset, as in proto3. */
export function enumName<T extends string>(names: Readonly<Record<string, T>>, v: string | number | null | undefined, zero: T): T {
  if (v === undefined || v === null) return zero;
  return typeof v === 'number' ? (Object.values(names)[v] ?? zero) : (v as T);
}

export function sandboxMetadata(m: p.PodSandboxMetadata | null | undefined): p.PodSandboxMetadata__Output {
  return { name: m?.name ?? '', uid: m?.uid ?? '', namespace: m?.namespace ?? '', attempt: m?.attempt ?? 0 };
}

export function containerMetadata(m: p.ContainerMetadata | null | undefined): p.ContainerMetadata__Output {
  return { name: m?.name ?? '', attempt: m?.attempt ?? 0 };
}

export function imageSpec(s: p.ImageSpec | null | undefined): p.ImageSpec__Output | null {
  if (!s) return null;
  return { image: s.image ?? '', annotations: s.annotations ?? {}, userSpecifiedImage: s.userSpecifiedImage ?? '', runtimeHandler: s.runtimeHandler ?? '' };
}

export function namespaceOptions(o: p.NamespaceOption | null | undefined): p.NamespaceOption__Output {
  return {
    network: enumName(p.NamespaceMode, o?.network, 'POD'),
    pid: enumName(p.NamespaceMode, o?.pid, 'POD'),
    ipc: enumName(p.NamespaceMode, o?.ipc, 'POD'),
    targetId: o?.targetId ?? '',
    usernsOptions: null,
  };
}

function idMappings(list: p.IDMapping[] | undefined): p.IDMapping__Output[] {
  return (list ?? []).map((m) => ({ hostId: m.hostId ?? 0, containerId: m.containerId ?? 0, length: m.length ?? 0 }));
}

export function mounts(list: p.Mount[] | undefined): p.Mount__Output[] {
  return (list ?? []).map((m) => ({
    containerPath: m.containerPath ?? '',
    hostPath: m.hostPath ?? '',
    readonly: m.readonly ?? false,
    selinuxRelabel: m.selinuxRelabel ?? false,
    propagation: enumName(p.MountPropagation, m.propagation, 'PROPAGATION_PRIVATE'),
    uidMappings: idMappings(m.uidMappings),
    gidMappings: idMappings(m.gidMappings),
  }));
}
