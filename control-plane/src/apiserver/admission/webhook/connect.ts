/**
 * CONNECT admission of pods/exec, pods/attach and pods/portforward (upstream's connect handler):
 * the query becomes the connect options object (PodExecOptions, PodAttachOptions,
 * PodPortForwardOptions) the webhooks see, and what a mutating webhook changed in it is what the
 * server then asks the agent for.
 */
import type { RequestScope } from '../../context.js';
import type { ApiObject } from '../../object.js';
import { admitConnect } from '../index.js';

const FLAGS = ['stdin', 'stdout', 'stderr', 'tty'] as const;

/** The options object of a connect query (booleans default false, as upstream decodes them). */
export function optionsOf(subresource: string, q: URLSearchParams): ApiObject {
  if (subresource === 'portforward') return { metadata: {}, ports: q.getAll('ports').map(Number) };
  const out: ApiObject = { metadata: {} };
  for (const f of FLAGS) out[f] = q.get(f) === 'true' || q.get(f) === '1';
  const container = q.get('container');
  if (container) out.container = container;
  if (subresource === 'exec') out.command = q.getAll('command');
  return out;
}

/** Writes `o` back into the query (after a mutating webhook changed it). */
export function writeBack(subresource: string, o: ApiObject, q: URLSearchParams): void {
  const set = (key: string, values: unknown): void => {
    q.delete(key);
    for (const v of Array.isArray(values) ? values : values === undefined ? [] : [values]) q.append(key, String(v));
  };
  if (subresource === 'portforward') return set('ports', o.ports);
  for (const f of FLAGS) set(f, o[f] === true ? 'true' : undefined);
  set('container', o.container);
  if (subresource === 'exec') set('command', o.command);
}

/** Admits the CONNECT of `s`; `query` (a copy of the request's) is updated with any mutation. */
export async function admitStreamConnect(s: RequestScope, query: URLSearchParams): Promise<void> {
  const sub = s.subresource!;
  const object = optionsOf(sub, query);
  const before = JSON.stringify(object);
  await admitConnect(s.ctx, { operation: 'CONNECT', user: s.user, def: s.served.def, subresource: sub, namespace: s.namespace, name: s.name, object, signal: s.signal });
  if (JSON.stringify(object) !== before) writeBack(sub, object, query);
}
