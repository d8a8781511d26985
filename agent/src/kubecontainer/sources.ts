/**
 * How the agent reads the ConfigMaps and Secrets pods reference (volumes, env, pull secrets): the
 * reader's type, shared by runtime/ (which reads) and source/ (which provides it from watches or
 * GETs, source/watched-objects.ts).
 */
import type { ConfigMap, Secret } from '@nodelet/api/agent';

export type SourceKind = 'configmap' | 'secret';
export type SourceObject<K extends SourceKind> = K extends 'configmap' ? ConfigMap : Secret;

/** Reads one ConfigMap or Secret; undefined when it does not exist, other API errors thrown. */
export type SourceRead = <K extends SourceKind>(kind: K, namespace: string, name: string, signal: AbortSignal) => Promise<SourceObject<K> | undefined>;
