/**
 * The create form: a Deployment (and optionally a Service) made with one API call each as the
 * signed-in user, the server's refusal shown as it came. A chunk fetched when the form first opens
 * (lazy.tsx), so the form and its image list are not part of the first load.
 */
import { useState } from 'preact/hooks';
import type { Api } from './api.js';
import { ImageField, useImageChoices } from './images.js';
import { DNS_LABEL } from './k8s.js';
import { ErrorLine } from './operate.js';

/** The create form: name, image (typed, or picked from the registry's and the nodes' images), replicas, an optional container port and Service. */
export function CreateDeployment(props: { api: Api; namespace: string; onDone(): void }) {
  const [name, setName] = useState('');
  const [image, setImage] = useState('registry.k8s.io/pause:3.10');
  const images = useImageChoices(props.api);
  const [replicas, setReplicas] = useState('1');
  const [port, setPort] = useState('');
  const [withService, setWithService] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const submit = async (): Promise<void> => {
    const n = Number(replicas);
    const p = port === '' ? undefined : Number(port);
    if (!DNS_LABEL.test(name)) return setError('The name must be a DNS label: lower-case letters, digits and "-", at most 63.');
    if (!image.trim()) return setError('An image is required.');
    if (!Number.isInteger(n) || n < 0) return setError('Replicas must be a whole number, 0 or more.');
    if (p !== undefined && (!Number.isInteger(p) || p < 1 || p > 65535)) return setError('The port must be 1 to 65535.');
    if (withService && p === undefined) return setError('A Service needs the container port.');
    const labels = { app: name };
    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: props.namespace, labels },
      spec: {
        replicas: n,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name, image: image.trim(), ...(p ? { ports: [{ containerPort: p }] } : {}) }] } },
      },
    };
    setBusy(true);
    setError(undefined);
    try {
      await props.api.send('POST', `/apis/apps/v1/namespaces/${props.namespace}/deployments`, deployment);
      if (withService) {
        const service = { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: props.namespace, labels }, spec: { selector: labels, ports: [{ port: p, targetPort: p }] } };
        await props.api.send('POST', `/api/v1/namespaces/${props.namespace}/services`, service);
      }
      props.onDone();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const field = (id: string, label: string, value: string, set: (v: string) => void, extra: Record<string, unknown> = {}) => (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} value={value} onInput={(e) => set((e.target as HTMLInputElement).value)} {...extra} />
    </div>
  );
  return (
    <form
      class="create"
      aria-label="Create a Deployment"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      {field('dep-name', 'Name', name, setName, { required: true, autocomplete: 'off' })}
      <ImageField id="dep-image" value={image} choices={images.choices} note={images.note} onInput={setImage} />
      {field('dep-replicas', 'Replicas', replicas, setReplicas, { type: 'number', min: 0 })}
      {field('dep-port', 'Container port (optional)', port, setPort, { type: 'number', min: 1, max: 65535 })}
      <div class="field check">
        <input id="dep-service" type="checkbox" checked={withService} onChange={(e) => setWithService((e.target as HTMLInputElement).checked)} />
        <label for="dep-service">Also create a Service on that port</label>
      </div>
      <button type="submit" id="dep-submit" disabled={busy}>
        Create in {props.namespace}
      </button>
      <ErrorLine error={error} id="create-error" />
    </form>
  );
}
