/**
 * Discovery documents from the resource table: aggregated v2 (`/api`, `/apis` with the
 * apidiscovery Accept) and the legacy APIVersions / APIGroupList / APIResourceList. `defs` is what
 * the server serves: the stored resources, plus `metrics.k8s.io` when it has a metrics source
 * (metrics-api.ts).
 */
import { RESOURCE_VERBS, type ResourceDef } from './resource.js';
import { groupVersions, RESOURCE_DEFS } from './resources.js';

export const SERVER_VERSION = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0-nodelet',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2026-01-01T00:00:00Z',
  goVersion: 'go1.23.0',
  compiler: 'gc',
  platform: 'linux/amd64',
};

function aggregatedResource(d: ResourceDef): Record<string, unknown> {
  return {
    resource: d.plural,
    responseKind: { group: d.group, version: d.version, kind: d.kind },
    scope: d.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: d.singular,
    verbs: [...(d.verbs ?? RESOURCE_VERBS)],
    ...(d.shortNames?.length ? { shortNames: [...d.shortNames] } : {}),
    ...(d.categories?.length ? { categories: [...d.categories] } : {}),
    ...(d.subresources.length
      ? {
          subresources: d.subresources.map((s) => ({
            subresource: s.name,
            responseKind: s.kind ?? { group: d.group, version: d.version, kind: d.kind },
            verbs: [...s.verbs],
          })),
        }
      : {}),
  };
}

/** The APIGroupDiscoveryList for `/api` (core) or `/apis` (named groups). */
export function aggregatedDiscovery(core: boolean, defs: readonly ResourceDef[] = RESOURCE_DEFS): Record<string, unknown> {
  const groups = new Map<string, Array<{ version: string; resources: ResourceDef[] }>>();
  for (const gv of groupVersions(defs)) {
    if ((gv.group === '') !== core) continue;
    const list = groups.get(gv.group) ?? [];
    list.push({ version: gv.version, resources: gv.resources });
    groups.set(gv.group, list);
  }
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: 'apidiscovery.k8s.io/v2',
    metadata: {},
    items: [...groups].map(([group, versions]) => ({
      metadata: core ? {} : { name: group },
      versions: versions.map((v) => ({ version: v.version, freshness: 'Current', resources: v.resources.map(aggregatedResource) })),
    })),
  };
}

export function legacyApiVersions(serverAddress: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }] };
}

export function legacyGroupList(defs: readonly ResourceDef[] = RESOURCE_DEFS): Record<string, unknown> {
  const groups = new Map<string, string[]>();
  for (const gv of groupVersions(defs)) {
    if (gv.group === '') continue;
    groups.set(gv.group, [...(groups.get(gv.group) ?? []), gv.version]);
  }
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups].map(([name, versions]) => ({
      name,
      versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
      preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
    })),
  };
}

export function legacyGroup(group: string, defs: readonly ResourceDef[] = RESOURCE_DEFS): Record<string, unknown> | undefined {
  const versions = groupVersions(defs).filter((g) => g.group === group && group !== '');
  if (!versions.length) return undefined;
  const vs = versions.map((v) => ({ groupVersion: `${group}/${v.version}`, version: v.version }));
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: vs, preferredVersion: vs[0] };
}

/** APIResourceList for `/api/v1` or `/apis/<group>/<version>`; undefined when not served. */
export function resourceList(group: string, version: string, served: readonly ResourceDef[] = RESOURCE_DEFS): Record<string, unknown> | undefined {
  const defs = served.filter((d) => d.group === group && d.version === version);
  if (!defs.length) return undefined;
  const resources: Array<Record<string, unknown>> = [];
  for (const d of defs) {
    resources.push({
      name: d.plural,
      singularName: d.singular,
      namespaced: d.namespaced,
      kind: d.kind,
      verbs: [...(d.verbs ?? RESOURCE_VERBS)],
      ...(d.shortNames?.length ? { shortNames: [...d.shortNames] } : {}),
      ...(d.categories?.length ? { categories: [...d.categories] } : {}),
    });
    for (const s of d.subresources) {
      resources.push({
        name: `${d.plural}/${s.name}`,
        singularName: '',
        namespaced: d.namespaced,
        ...(s.kind ? { group: s.kind.group, version: s.kind.version } : {}),
        kind: s.kind?.kind ?? d.kind,
        verbs: [...s.verbs],
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}
