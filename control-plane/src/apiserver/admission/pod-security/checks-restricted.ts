/**
 * The restricted level's checks (upstream policy/check_*.go, the versions up to v1.32), on top of
 * the baseline ones they do not replace: only the safe volume types, no privilege escalation,
 * non-root, not UID 0, a RuntimeDefault or Localhost seccomp profile, capabilities dropped to
 * ALL with at most NET_BIND_SERVICE added.
 */
import type { Json } from '../../object.js';
import {
  ALLOWED, allContainers, containersPhrase, forbid, isWindowsPod, joinQuote, nameOf, objectField, pluralize, securityContextOf, setters, sortedSet,
  type Check, type CheckFn,
} from './check.js';
import { CAPABILITIES_BASELINE_ID, HOST_PATH_VOLUMES_ID, SECCOMP_BASELINE_ID, seccompTypeOf, validSeccompType } from './checks-baseline.js';

/** Windows pods (spec.os.name) are exempt from the Linux-only checks from v1.25 on. */
const exceptWindows = (check: CheckFn): CheckFn => (meta, spec) => (isWindowsPod(spec) ? ALLOWED : check(meta, spec));

const containerSettings = (spec: Json): Array<{ name: string; sc: Json | undefined }> => allContainers(spec).map((c) => ({ name: nameOf(c), sc: securityContextOf(c) }));

const allowPrivilegeEscalation: CheckFn = (_meta, spec) => {
  const bad = containerSettings(spec).filter((c) => c.sc?.allowPrivilegeEscalation !== false).map((c) => c.name);
  return bad.length ? forbid('allowPrivilegeEscalation != false', `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`) : ALLOWED;
};

/** The inline volume sources restricted pods may use. */
const ALLOWED_VOLUME_SOURCES = new Set(['configMap', 'csi', 'downwardAPI', 'emptyDir', 'ephemeral', 'image', 'persistentVolumeClaim', 'projected', 'secret']);
/** The sources upstream names when it refuses one (in its order); anything else is "unknown". */
const NAMED_VOLUME_SOURCES = [
  'hostPath', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'nfs', 'iscsi', 'glusterfs', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'fc',
  'azureFile', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'portworxVolume', 'scaleIO', 'storageos',
];

const restrictedVolumes: CheckFn = (_meta, spec) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const vol of (Array.isArray(spec.volumes) ? spec.volumes : []) as Json[]) {
    if ([...ALLOWED_VOLUME_SOURCES].some((k) => objectField(vol, k) !== undefined)) continue;
    bad.push(nameOf(vol));
    types.push(NAMED_VOLUME_SOURCES.find((k) => objectField(vol, k) !== undefined) ?? 'unknown');
  }
  if (!bad.length) return ALLOWED;
  const distinct = sortedSet(types);
  return forbid(
    'restricted volume types',
    `${pluralize('volume', 'volumes', bad.length)} ${joinQuote(bad)} ${pluralize('uses', 'use', bad.length)} ${pluralize('restricted volume type', 'restricted volume types', distinct.length)} ${joinQuote(distinct)}`,
  );
};

const runAsNonRoot: CheckFn = (_meta, spec) => {
  const podValue = securityContextOf(spec)?.runAsNonRoot;
  const podBad = podValue === false;
  const podNonRoot = podValue === true;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containerSettings(spec)) {
    const value = c.sc?.runAsNonRoot;
    if (typeof value === 'boolean') {
      if (!value) explicit.push(c.name);
    } else if (!podNonRoot) {
      implicit.push(c.name);
    }
  }
  const who = setters(podBad, explicit);
  if (who.length) return forbid('runAsNonRoot != true', `${who.join(' and ')} must not set securityContext.runAsNonRoot=false`);
  if (implicit.length) return forbid('runAsNonRoot != true', `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`);
  return ALLOWED;
};

const runAsUser: CheckFn = (_meta, spec) => {
  const isRoot = (sc: Json | undefined): boolean => sc?.runAsUser === 0;
  const who = setters(isRoot(securityContextOf(spec)), containerSettings(spec).filter((c) => isRoot(c.sc)).map((c) => c.name));
  return who.length ? forbid('runAsUser=0', `${who.join(' and ')} must not set runAsUser=0`) : ALLOWED;
};

const seccompRestricted: CheckFn = (_meta, spec) => {
  const values: string[] = [];
  const pod = seccompTypeOf(securityContextOf(spec));
  const podBad = pod.set && !validSeccompType(pod.type);
  if (podBad) values.push(pod.type);
  const podSet = pod.set && !podBad;
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containerSettings(spec)) {
    const t = seccompTypeOf(c.sc);
    if (t.set) {
      if (validSeccompType(t.type)) continue;
      explicit.push(c.name);
      values.push(t.type);
    } else if (!podSet) {
      implicit.push(c.name);
    }
  }
  const who = setters(podBad, explicit);
  if (who.length) return forbid('seccompProfile', `${who.join(' and ')} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`);
  if (implicit.length) return forbid('seccompProfile', `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`);
  return ALLOWED;
};

const capabilitiesRestricted: CheckFn = (_meta, spec) => {
  const missingDrop: string[] = [];
  const adding: string[] = [];
  const forbidden: string[] = [];
  for (const c of containerSettings(spec)) {
    const caps = objectField(c.sc, 'capabilities');
    if (!caps) {
      missingDrop.push(c.name);
      continue;
    }
    if (!(Array.isArray(caps.drop) && caps.drop.includes('ALL'))) missingDrop.push(c.name);
    const extra = (Array.isArray(caps.add) ? caps.add : []).map(String).filter((cap) => cap !== 'NET_BIND_SERVICE');
    if (extra.length) {
      adding.push(c.name);
      forbidden.push(...extra);
    }
  }
  const details: string[] = [];
  if (missingDrop.length) details.push(`${containersPhrase(missingDrop)} must set securityContext.capabilities.drop=["ALL"]`);
  if (adding.length) details.push(`${containersPhrase(adding)} must not include ${joinQuote(sortedSet(forbidden))} in securityContext.capabilities.add`);
  return details.length ? forbid('unrestricted capabilities', details.join('; ')) : ALLOWED;
};

export const RESTRICTED_CHECKS: readonly Check[] = [
  { id: 'allowPrivilegeEscalation', level: 'restricted', versions: [{ minVersion: 8, check: allowPrivilegeEscalation }, { minVersion: 25, check: exceptWindows(allowPrivilegeEscalation) }] },
  {
    id: 'capabilities_restricted',
    level: 'restricted',
    versions: [
      { minVersion: 22, check: capabilitiesRestricted, overrides: [CAPABILITIES_BASELINE_ID] },
      { minVersion: 25, check: exceptWindows(capabilitiesRestricted), overrides: [CAPABILITIES_BASELINE_ID] },
    ],
  },
  { id: 'restrictedVolumes', level: 'restricted', versions: [{ minVersion: 0, check: restrictedVolumes, overrides: [HOST_PATH_VOLUMES_ID] }] },
  { id: 'runAsNonRoot', level: 'restricted', versions: [{ minVersion: 0, check: runAsNonRoot }] },
  { id: 'runAsUser', level: 'restricted', versions: [{ minVersion: 23, check: runAsUser }] },
  {
    id: 'seccompProfile_restricted',
    level: 'restricted',
    versions: [
      { minVersion: 19, check: seccompRestricted, overrides: [SECCOMP_BASELINE_ID] },
      { minVersion: 25, check: exceptWindows(seccompRestricted), overrides: [SECCOMP_BASELINE_ID] },
    ],
  },
];
