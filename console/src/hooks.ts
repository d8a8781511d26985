/** Preact hooks over the API: a live collection (list and watch), a poll, an access check, a clock. */
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';
import { canI } from './access.js';
import { listAndWatch, type KObject } from './watch.js';

export interface Watched<T> {
  items: T[];
  /** The server's message while the collection cannot be read (e.g. a 403). */
  error?: string;
  /** True once the first list arrived. */
  synced: boolean;
}

/** The objects at `path`, kept live; `path` undefined: nothing. */
export function useWatch<T extends KObject>(api: Api, path: string | undefined): Watched<T> {
  const [state, setState] = useState<Watched<T>>({ items: [], synced: false });
  useEffect(() => {
    setState({ items: [], synced: false });
    if (!path) return undefined;
    const ac = new AbortController();
    void listAndWatch<T>({
      api,
      path,
      signal: ac.signal,
      onChange: (items) => setState((s) => ({ ...s, items, synced: true })),
      onError: (error) => setState((s) => (error === undefined ? { items: s.items, synced: s.synced } : { ...s, error })),
    });
    return () => ac.abort();
  }, [api, path]);
  return state;
}

/** Whether the user may `verb` `resource` of `group` in `namespace` (a SelfSubjectAccessReview); undefined while asking. */
export function useCan(api: Api, verb: string, group: string, resource: string, namespace: string): boolean | undefined {
  const [allowed, setAllowed] = useState<boolean | undefined>(undefined);
  useEffect(() => {
    setAllowed(undefined);
    const ac = new AbortController();
    void canI(api, { namespace, verb, group, resource }, ac.signal).then((r) => r !== undefined && setAllowed(r));
    return () => ac.abort();
  }, [api, verb, group, resource, namespace]);
  return allowed;
}

/**
 * The items at `path`, listed now and every `everyMs`: for what has no watch (metrics.k8s.io
 * serves none, as metrics-server). `at` is when the last answer came.
 */
export function usePoll<T>(api: Api, path: string, everyMs: number): { items: T[]; error?: string; at: number } {
  const [state, setState] = useState<{ items: T[]; error?: string; at: number }>({ items: [], at: Date.now() });
  useEffect(() => {
    const ac = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const once = (): void => {
      api.get(path, ac.signal).then(
        (l) => setState({ items: ((l as { items?: T[] } | undefined)?.items ?? []) as T[], at: Date.now() }),
        (err: unknown) => !ac.signal.aborted && setState((s) => ({ ...s, error: (err as Error).message, at: Date.now() })),
      );
      timer = setTimeout(once, everyMs);
    };
    once();
    return () => {
      ac.abort();
      clearTimeout(timer);
    };
  }, [api, path, everyMs]);
  return state;
}

/** The time now, again every `everyMs`: for ages that grow between watch events. */
export function useNow(everyMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
