/**
 * Apply YAML: server-side apply of one or several documents, as `kubectl apply --server-side`
 * does it: each document is a `PATCH` of `application/apply-patch+yaml` to its object's URL with
 * `fieldManager=nodelet-console`, in order, each shown with the server's answer as it came (a
 * conflict's 409 included: nothing is forced). The kind's resource name and scope come from the
 * API's discovery document of its group and version. This module and its YAML parser are a chunk
 * fetched when the panel first opens (overview.tsx).
 */
import { useState } from 'preact/hooks';
import { parseAllDocuments } from 'yaml';
import type { Api } from './api.js';
import { ErrorLine } from './operate.js';

/** The field manager the console's applies are recorded under (metadata.managedFields). */
export const FIELD_MANAGER = 'nodelet-console';

/** One document to apply: its identity and its content (sent as JSON, which is YAML). */
export interface ApplyDoc {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  object: unknown;
}

/** The documents of `text` (empty ones skipped), or the first problem with the text itself. */
export function splitDocuments(text: string): { docs: ApplyDoc[] } | { error: string } {
  const docs: ApplyDoc[] = [];
  let n = 0;
  for (const doc of parseAllDocuments(text)) {
    n++;
    if (doc.errors.length) return { error: `document ${n}: ${doc.errors[0]!.message}` };
    const value = doc.toJS() as unknown;
    if (value === null || value === undefined) continue;
    const o = value as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    if (typeof o !== 'object' || Array.isArray(o)) return { error: `document ${n}: not an object` };
    const missing = [typeof o.apiVersion !== 'string' && 'apiVersion', typeof o.kind !== 'string' && 'kind', typeof o.metadata?.name !== 'string' && 'metadata.name'].filter(Boolean);
    if (missing.length) return { error: `document ${n}: ${missing.join(', ')} not set` };
    docs.push({
      apiVersion: o.apiVersion as string,
      kind: o.kind as string,
      name: o.metadata!.name as string,
      ...(typeof o.metadata?.namespace === 'string' ? { namespace: o.metadata.namespace } : {}),
      object: value,
    });
  }
  return { docs };
}

/** What discovery says about a kind: its resource (plural) name and whether it is namespaced. */
export interface ResourceInfo {
  name: string;
  kind: string;
  namespaced: boolean;
}

/** The discovery document's path for `apiVersion` (`v1` → /api/v1, `apps/v1` → /apis/apps/v1). */
export const discoveryPath = (apiVersion: string): string => (apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`);

/** The object's URL for the apply, with the field manager; a namespaced object without a namespace goes to `defaultNamespace`. */
export function applyPath(doc: ApplyDoc, r: ResourceInfo, defaultNamespace: string): string {
  const ns = r.namespaced ? `/namespaces/${encodeURIComponent(doc.namespace ?? defaultNamespace)}` : '';
  return `${discoveryPath(doc.apiVersion)}${ns}/${r.name}/${encodeURIComponent(doc.name)}?fieldManager=${FIELD_MANAGER}`;
}

/** kubectl's name for the result line: `deployment.apps/web`, `configmap/settings`. */
export function resultName(doc: ApplyDoc): string {
  const group = doc.apiVersion.includes('/') ? `.${doc.apiVersion.split('/')[0]}` : '';
  return `${doc.kind.toLowerCase()}${group}/${doc.name}`;
}

/** Applies each document in turn; one refused does not stop the rest (kubectl goes on too). */
async function applyAll(api: Api, docs: ApplyDoc[], namespace: string): Promise<{ name: string; ok: boolean; message: string }[]> {
  const discovery = new Map<string, Promise<ResourceInfo[]>>();
  const results: { name: string; ok: boolean; message: string }[] = [];
  for (const doc of docs) {
    const name = resultName(doc);
    try {
      let list = discovery.get(doc.apiVersion);
      if (!list) {
        list = api.get(discoveryPath(doc.apiVersion)).then((d) => ((d as { resources?: ResourceInfo[] }).resources ?? []).filter((r) => !r.name.includes('/')));
        discovery.set(doc.apiVersion, list);
        // A refused discovery is that document's error; the next document of the version asks again.
        list.catch(() => discovery.delete(doc.apiVersion));
      }
      const r = (await list).find((x) => x.kind === doc.kind);
      if (!r) throw new Error(`the server does not serve kind "${doc.kind}" in version "${doc.apiVersion}"`);
      await api.send('PATCH', applyPath(doc, r, namespace), doc.object, 'application/apply-patch+yaml');
      results.push({ name, ok: true, message: 'serverside-applied' });
    } catch (err) {
      results.push({ name, ok: false, message: (err as Error).message });
    }
  }
  return results;
}

/** The panel: a text area, Apply, and one line per document with the server's answer. */
export function ApplyPanel(props: { api: Api; namespace: string; onClose(): void }) {
  const [text, setText] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [results, setResults] = useState<{ name: string; ok: boolean; message: string }[]>([]);
  const apply = async (): Promise<void> => {
    setError(undefined);
    setResults([]);
    const split = splitDocuments(text);
    if ('error' in split) return setError(split.error);
    if (!split.docs.length) return setError('Nothing to apply: the text holds no document.');
    setBusy(true);
    try {
      setResults(await applyAll(props.api, split.docs, props.namespace));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="apply-title" id="apply">
      <div class="panel-head">
        <h2 id="apply-title">Apply YAML (server-side apply, field manager {FIELD_MANAGER})</h2>
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
      <label for="apply-text">
        One or more documents separated by <code>---</code>; those without a namespace go to {props.namespace}.
      </label>
      <textarea id="apply-text" spellcheck={false} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
      <div class="actions">
        <button type="button" id="apply-submit" disabled={busy} onClick={() => void apply()}>
          Apply
        </button>
      </div>
      <ErrorLine error={error} id="apply-error" />
      <ul class="applied" aria-label="Apply results">
        {results.map((r, i) => (
          <li key={i} data-applied={r.name} data-ok={String(r.ok)} class={r.ok ? '' : 'error'}>
            <strong>{r.name}</strong>: {r.message}
          </li>
        ))}
      </ul>
    </section>
  );
}
