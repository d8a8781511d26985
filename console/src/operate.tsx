/**
 * Operations, each one API call made as the signed-in user: scale, restart, delete, follow a pod's
 * log (creating a Deployment is create.tsx's). A refusal shows the server's message as it came (a `view`
 * user's 403 included): the page decides nothing the server did not.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiErrorOf, type Api } from './api.js';
import type { Pod, Workload } from './k8s.js';

/** The server's message, or nothing. */
export function ErrorLine(props: { error: string | undefined; id?: string }) {
  return props.error ? (
    <p role="alert" class="error" {...(props.id ? { id: props.id } : {})}>
      {props.error}
    </p>
  ) : null;
}

/**
 * The operations on one workload at `path` (its object URL): scale (`…/scale`, Deployments and
 * StatefulSets), restart (`kubectl rollout restart`: Deployments, StatefulSets, DaemonSets) and
 * delete (every kind), each shown with the server's answer.
 */
export function WorkloadActions(props: { api: Api; workload: Workload; path: string; scale: boolean; restart: boolean }) {
  const d = props.workload;
  const name = d.metadata.name!;
  const path = props.path;
  const [replicas, setReplicas] = useState(String(d.spec?.replicas ?? 0));
  const [confirm, setConfirm] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = async (f: () => Promise<unknown>): Promise<void> => {
    setError(undefined);
    try {
      await f();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const scale = (): Promise<void> => run(() => props.api.send('PATCH', `${path}/scale`, { spec: { replicas: Number(replicas) } }, 'application/merge-patch+json'));
  // `kubectl rollout restart`: a new template annotation makes the controller replace every pod.
  const restart = (): Promise<void> =>
    run(() =>
      props.api.send('PATCH', path, { spec: { template: { metadata: { annotations: { 'kubectl.kubernetes.io/restartedAt': new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') } } } } }, 'application/merge-patch+json'),
    );
  const remove = (): Promise<void> => run(() => props.api.send('DELETE', path, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' }));
  return (
    <div class="actions">
      {props.scale && (
        <>
          <label for={`scale-${name}`}>Replicas</label>
          <input id={`scale-${name}`} class="narrow" type="number" min={0} value={replicas} onInput={(e) => setReplicas((e.target as HTMLInputElement).value)} />
          <button type="button" data-action="scale" onClick={() => void scale()}>
            Scale
          </button>
        </>
      )}
      {props.restart && (
        <button type="button" data-action="restart" onClick={() => void restart()}>
          Restart
        </button>
      )}
      {confirm ? (
        <>
          <button type="button" class="danger" data-action="confirm-delete" onClick={() => void remove().then(() => setConfirm(false))}>
            Delete {name}
          </button>
          <button type="button" onClick={() => setConfirm(false)}>
            Keep
          </button>
        </>
      ) : (
        <button type="button" data-action="delete" onClick={() => setConfirm(true)}>
          Delete…
        </button>
      )}
      <ErrorLine error={error} />
    </div>
  );
}

/** A pod's log, followed (streamed) until closed. */
export function LogViewer(props: { api: Api; pod: Pod; onClose(): void }) {
  const { namespace, name } = props.pod.metadata;
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const pre = useRef<HTMLPreElement>(null);
  useEffect(() => {
    setText('');
    setError(undefined);
    const ac = new AbortController();
    void (async () => {
      try {
        const res = await props.api.fetch(`/api/v1/namespaces/${namespace}/pods/${name}/log?follow=true&tailLines=1000`, { signal: ac.signal });
        if (!res.ok) throw await apiErrorOf(res);
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          // Keep the last 200 kB: a chatty container must not grow the page without end.
          setText((t) => (t + value).slice(-200_000));
        }
      } catch (err) {
        if (!ac.signal.aborted) setError((err as Error).message);
      }
    })();
    return () => ac.abort();
  }, [props.api, namespace, name]);
  useEffect(() => {
    if (pre.current) pre.current.scrollTop = pre.current.scrollHeight;
  }, [text]);
  return (
    <section aria-labelledby="logs-title" id="logs">
      <div class="panel-head">
        <h2 id="logs-title">
          Logs of {namespace}/{name} (following)
        </h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      <ErrorLine error={error} />
      <pre ref={pre} tabIndex={0} aria-label={`Log of ${name}`}>
        {text}
      </pre>
    </section>
  );
}
