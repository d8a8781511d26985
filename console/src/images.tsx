/**
 * The create form's image field: free text with a list of the images a user can run — the
 * registry's catalogue (`GET /nodelet/registry/catalog`: what the registry `nodelet server` runs
 * serves, as nodes pull it) and the images already on the nodes (`node.status.images`) — both read
 * with the user's own token, so RBAC decides what the list holds (docs/console.md, "The image
 * list"). The list is an ARIA 1.2 combobox with a list popup: typing filters it, the arrow keys
 * move through it, Enter takes the highlighted image, Escape closes it; a pointer works too.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.js';
import type { Node } from './k8s.js';

/** One image the list offers: its reference, whether the registry serves it, on how many nodes it is. */
export interface ImageChoice {
  ref: string;
  registry: boolean;
  nodes: number;
}

/** The list's entries: the registry's first (in its order), then node images by how many nodes hold them, then name. Digest names are left out. */
export function imageChoices(catalogue: readonly string[], nodes: readonly Node[]): ImageChoice[] {
  const byRef = new Map<string, ImageChoice>(catalogue.map((ref) => [ref, { ref, registry: true, nodes: 0 }]));
  for (const n of nodes) {
    // A node lists each image once with all its names (tags and digests); count each name once per node.
    const names = new Set((n.status?.images ?? []).flatMap((i) => i.names ?? []).filter((r) => !r.includes('@') && r !== '<none>:<none>'));
    for (const ref of names) {
      const c = byRef.get(ref) ?? { ref, registry: false, nodes: 0 };
      c.nodes++;
      byRef.set(ref, c);
    }
  }
  const rank = (c: ImageChoice): number => (c.registry ? 0 : 1);
  return [...byRef.values()].sort((a, b) => rank(a) - rank(b) || (a.registry ? 0 : b.nodes - a.nodes || a.ref.localeCompare(b.ref)));
}

/** The choices holding `text` (any case); all of them when it is empty. */
export function filterChoices(choices: readonly ImageChoice[], text: string): ImageChoice[] {
  const t = text.trim().toLowerCase();
  return t ? choices.filter((c) => c.ref.toLowerCase().includes(t)) : [...choices];
}

/** The list's state after a key: whether it is open, the highlighted entry (-1: none), and whether the key takes that entry. */
export function listKey(key: string, alt: boolean, open: boolean, active: number, count: number): { open: boolean; active: number; take?: boolean; handled: boolean } {
  if (key === 'ArrowDown') return open && !alt ? { open, active: count ? (active + 1) % count : -1, handled: true } : { open: true, active: alt ? -1 : count ? 0 : -1, handled: true };
  if (key === 'ArrowUp') return open ? { open, active: count ? (active <= 0 ? count - 1 : active - 1) : -1, handled: true } : { open: true, active: count - 1, handled: true };
  if (key === 'Enter' && open && active >= 0 && active < count) return { open: false, active: -1, take: true, handled: true };
  if (key === 'Escape' && open) return { open: false, active: -1, handled: true };
  return { open, active, handled: false };
}

/** The registry's catalogue and the nodes' images, each read once; a refusal becomes a line under the field. */
export function useImageChoices(api: Api): { choices: ImageChoice[]; note: string } {
  const [state, setState] = useState({ choices: [] as ImageChoice[], note: '' });
  useEffect(() => {
    let live = true;
    void Promise.allSettled([api.get('/nodelet/registry/catalog'), api.get('/api/v1/nodes')]).then(([cat, nodes]) => {
      if (!live) return;
      const refs = cat.status === 'fulfilled' ? ((cat.value as { images?: string[] }).images ?? []) : [];
      const items = nodes.status === 'fulfilled' ? ((nodes.value as { items?: Node[] }).items ?? []) : [];
      const choices = imageChoices(refs, items);
      const why = (r: PromiseSettledResult<unknown>, what: string): string => (r.status === 'rejected' ? ` ${what}: ${(r.reason as Error).message}.` : '');
      setState({ choices, note: `${refs.length} from the registry, ${choices.filter((c) => c.nodes).length} on nodes.${why(cat, 'Registry')}${why(nodes, 'Nodes')}` });
    });
    return () => void (live = false);
  }, [api]);
  return state;
}

/** The image field: a text input that is a combobox over `choices`. */
export function ImageField(props: { id: string; value: string; choices: readonly ImageChoice[]; note: string; onInput(v: string): void }) {
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [typed, setTyped] = useState(false);
  // Until the user types, the list shows everything (the field starts with a default image).
  const shown = typed ? filterChoices(props.choices, props.value) : [...props.choices];
  const list = `${props.id}-list`;
  const optId = (i: number): string => `${props.id}-opt-${i}`;
  const take = (c: ImageChoice | undefined): void => {
    if (c) props.onInput(c.ref);
    setOpen(false);
    setActive(-1);
    setTyped(false);
  };
  const expanded = open && shown.length > 0;
  // The highlighted entry stays in view as the arrows move through a list longer than its box.
  useEffect(() => {
    if (expanded && active >= 0) document.getElementById(optId(active))?.scrollIntoView({ block: 'nearest' });
  }, [expanded, active]);
  return (
    <div class="field combo">
      <label for={props.id}>Image</label>
      <input
        id={props.id}
        value={props.value}
        required
        autocomplete="off"
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={expanded}
        aria-controls={list}
        aria-describedby={`${props.id}-note`}
        {...(expanded && active >= 0 ? { 'aria-activedescendant': optId(active) } : {})}
        onInput={(e) => {
          props.onInput((e.target as HTMLInputElement).value);
          setTyped(true);
          setOpen(true);
          setActive(-1);
        }}
        onKeyDown={(e) => {
          const next = listKey(e.key, e.altKey, open, active, shown.length);
          if (!next.handled) return;
          e.preventDefault();
          if (next.take) take(shown[active]);
          else {
            setOpen(next.open);
            setActive(next.active);
          }
        }}
        onBlur={() => setOpen(false)}
      />
      <ul id={list} role="listbox" aria-label="Images" class="options" hidden={!expanded}>
        {shown.map((c, i) => (
          <li
            id={optId(i)}
            role="option"
            aria-selected={i === active}
            data-image={c.ref}
            key={c.ref}
            // mousedown, not click: the input keeps its focus (no blur closing the list first).
            onMouseDown={(e) => {
              e.preventDefault();
              take(c);
            }}
          >
            {c.ref} <span class="hint">{[c.registry ? 'registry' : '', c.nodes ? `on ${c.nodes} node${c.nodes > 1 ? 's' : ''}` : ''].filter(Boolean).join(', ')}</span>
          </li>
        ))}
      </ul>
      <span class="hint" id={`${props.id}-note`}>
        {props.note}
      </span>
    </div>
  );
}
