/**
 * Rules that another part of the agent keeps in the proxy's table (NetworkPolicy enforcement,
 * docs/network.md): its hooked chains, its own chains and its named sets and maps. The proxy
 * merges a contribution into the state it writes, so the same full and partial transactions
 * (render.ts, partial.ts) carry it and a drift repair or a full sync never drops it.
 *
 *   extension.contribution() ─▶ addContribution(proxy state) ─▶ TableWriter ─▶ extension.written(c)
 *
 * Names must not collide with the proxy's (the NetworkPolicy pieces all start with `netpol-`).
 */
import type { TableElement, TableState } from './render.js';

/** A named set or verdict map of a contribution. */
export interface NamedSet {
  kind: 'set' | 'map';
  /** The declaration inside the braces: `type ipv4_addr : verdict;`, `type … ; flags interval;`. */
  spec: string;
  elements: Map<string, TableElement>;
}

export interface TableContribution {
  /** Hooked chains (fixed: a change forces a full sync), after the proxy's own. */
  base: ReadonlyArray<readonly [string, readonly string[]]>;
  chains: ReadonlyMap<string, string[]>;
  sets: ReadonlyMap<string, NamedSet>;
  /** Handed back to `written` so the extension knows which of its states is live. */
  version: number;
}

/** What the proxy asks of an extension at every sync. */
export interface TableExtension {
  /** The extension's current wish; called once per sync. */
  contribution(): TableContribution;
  /** `c` (as returned by `contribution`) is live in the kernel. */
  written(c: TableContribution): void;
  /** Registers the proxy's "sync soon" callback; returns the unsubscribe. */
  subscribe(requestSync: () => void): () => void;
  /** Resolves when the extension's sources are listed: the proxy's first sync waits for it. */
  waitForSync(signal: AbortSignal): Promise<void>;
}

/** `state` with `c` merged in (new maps; `state` is not changed). */
export function addContribution(state: TableState, c: TableContribution | undefined): TableState {
  if (!c) return state;
  const chains = new Map(state.chains);
  for (const [name, rules] of c.chains) chains.set(name, rules);
  const sets = new Map(state.sets);
  for (const [name, s] of c.sets) sets.set(name, s);
  return { ...state, base: [...state.base, ...c.base], chains, sets };
}

/** `add set|map ip <table> <name> { <spec> }` for a partial transaction. */
export function addSetText(table: string, name: string, s: NamedSet): string {
  return `add ${s.kind} ip ${table} ${name} { ${s.spec} }`;
}

/** The set's block of a full transaction. */
export function setBlock(name: string, s: NamedSet, elementLine: (key: string, e: TableElement) => string): string[] {
  const lines = [`\t${s.kind} ${name} {`, ...s.spec.split(';').map((x) => x.trim()).filter(Boolean).map((x) => `\t\t${x}`)];
  if (s.elements.size) lines.push(`\t\telements = { ${[...s.elements].map(([k, e]) => elementLine(k, e)).join(',\n\t\t\t')} }`);
  lines.push('\t}');
  return lines;
}
