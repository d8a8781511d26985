/**
 * The pod volumes the agent materialises on the host before containers start: emptyDir (a
 * directory), configMap and secret (their keys written as files). Everything lives under
 * `<root-dir>/pods/<uid>/` and is removed with the pod. hostPath is mounted as given.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, normalize } from 'node:path';
import { AgentError } from '@nodelet/base';
import type { Pod } from '@nodelet/api';
import type { EnvSourceReader } from './env.js';
import { podDir, volumeDir } from './container-config.js';

/** Creates/refreshes every volume of the pod. Idempotent. Missing non-optional sources → ERR_FAILED_PRECONDITION. */
export async function preparePodVolumes(pod: Pod, rootDir: string, reader: EnvSourceReader, signal: AbortSignal): Promise<void> {
  const uid = pod.metadata.uid!;
  const ns = pod.metadata.namespace ?? 'default';
  for (const v of pod.spec?.volumes ?? []) {
    const dir = volumeDir(rootDir, uid, v);
    if (!dir) continue;
    await mkdir(dir, { recursive: true, mode: 0o777 });
    if (!v.configMap && !v.secret) continue;
    const name = v.configMap?.name ?? v.secret?.secretName ?? '';
    const data = v.configMap ? await reader.configMap(ns, name, signal) : await reader.secret(ns, name, signal);
    if (!data) {
      if (v.configMap?.optional || v.secret?.optional) continue;
      throw new AgentError('ERR_FAILED_PRECONDITION', `${v.configMap ? 'configmap' : 'secret'} "${name}" not found (volume "${v.name}")`);
    }
    const items = v.configMap?.items ?? v.secret?.items ?? Object.keys(data).map((key) => ({ key, path: key, mode: undefined }));
    const mode = v.configMap?.defaultMode ?? v.secret?.defaultMode ?? 0o644;
    for (const item of items) {
      const rel = normalize(item.path);
      if (rel.startsWith('..') || rel.startsWith('/')) throw new AgentError('ERR_INVALID_ARGUMENT', `volume "${v.name}": item path "${item.path}" escapes the volume`);
      const file = join(dir, rel);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, data[item.key] ?? '', { mode: item.mode ?? mode });
    }
  }
}

/** Removes `<root-dir>/pods/<uid>` (volumes included). Idempotent. */
export async function removePodDir(rootDir: string, uid: string): Promise<void> {
  await rm(podDir(rootDir, uid), { recursive: true, force: true });
}
