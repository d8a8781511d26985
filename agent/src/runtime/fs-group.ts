/**
 * Volume ownership for a pod's `fsGroup` (kubelet volume SetVolumeOwnership): every file of a
 * writable volume gets the fsGroup as its group and group read/write; directories also get
 * group execute and setgid, so what the containers create later inherits the group.
 *
 *   fsGroupChangePolicy Always (default)  every file, each time the volume is set up
 *   fsGroupChangePolicy OnRootMismatch    nothing when the volume's root already has the group,
 *                                         the permissions and setgid; else every file
 *
 * Applies to emptyDir and persistentVolumeClaim volumes (configMap, secret, projected and
 * downwardAPI files are written by the agent itself). Symlinks are never followed: a container
 * may plant one pointing at the node's files, so only the link itself is chowned.
 */
import { chmod, lchown, lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pod } from '@nodelet/api/agent';
import { volumeDir } from './container-config.js';
import { volumeKindOf } from './volume-kinds.js';

const RW = 0o660;
const RO = 0o440;
const EXEC = 0o110;
const SETGID = 0o2000;

/** Whether the volume root already has the group and the bits (the OnRootMismatch shortcut). */
async function rootMatches(dir: string, gid: number, readOnly: boolean): Promise<boolean> {
  const st = await lstat(dir);
  const want = (readOnly ? RO : RW) | EXEC | SETGID;
  return st.gid === gid && (st.mode & want) === want;
}

async function walk(path: string, gid: number, readOnly: boolean, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  const st = await lstat(path);
  await lchown(path, st.uid, gid);
  if (st.isSymbolicLink()) return;
  let mask = readOnly ? RO : RW;
  if (st.isDirectory()) mask |= EXEC | SETGID;
  // Only the permission and setgid bits: chmod takes no file-type bits.
  await chmod(path, (st.mode & 0o7777) | mask);
  if (!st.isDirectory()) return;
  for (const name of await readdir(path)) await walk(join(path, name), gid, readOnly, signal);
}

/** Gives the pod's emptyDir and persistentVolumeClaim volumes to its fsGroup, as its fsGroupChangePolicy says. */
export async function applyFsGroup(pod: Pod, rootDir: string, signal: AbortSignal): Promise<void> {
  const sc = pod.spec?.securityContext;
  const gid = sc?.fsGroup;
  if (gid === undefined) return;
  for (const v of pod.spec?.volumes ?? []) {
    const kind = volumeKindOf(v);
    if (!kind?.fsGroup) continue;
    const dir = volumeDir(rootDir, pod.metadata.uid!, v);
    if (!dir) continue;
    const readOnly = kind.readOnly(v);
    if (sc?.fsGroupChangePolicy === 'OnRootMismatch' && (await rootMatches(dir, gid, readOnly))) continue;
    await walk(dir, gid, readOnly, signal);
  }
}
