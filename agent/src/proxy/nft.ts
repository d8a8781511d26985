/**
 * The proxy's nftables edge: apply a transaction (`nft -f -`), syntax-check one (`nft -c -f -`),
 * read the live table (`nft -j list table ip <t>`), and reduce that JSON to what affinity
 * carry-over, `nodelet doctor` and the tests need. nft's stderr is translated here, once: "No such file or
 * directory" on a list means the table is missing (ERR_NOT_FOUND).
 */
import { AgentError } from '@nodelet/base';
import type { CommandRunner } from './exec.js';
import { isAffinitySet } from './names.js';
import type { AffinityEntry } from './render.js';

export class Nft {
  readonly #run: CommandRunner;
  readonly #timeoutMs: number;

  constructor(runner: CommandRunner, o: { timeoutMs?: number } = {}) {
    this.#run = runner;
    this.#timeoutMs = o.timeoutMs ?? 60_000;
  }

  /** Applies `script` as one atomic transaction; `onSpawn` gets nft's process ID (see TableMonitor). */
  async apply(script: string, signal: AbortSignal, onSpawn?: (pid: number) => void): Promise<void> {
    const r = await this.#run.run(['nft', '-f', '-'], { input: script, signal, timeoutMs: this.#timeoutMs, onSpawn });
    if (r.code !== 0) throw new AgentError('ERR_INTERNAL', `nft -f failed: ${firstLines(r.stderr)}`);
  }

  /** `nft -c`: parses and checks `script` against the kernel without changing anything. */
  async check(script: string, signal: AbortSignal): Promise<void> {
    const r = await this.#run.run(['nft', '-c', '-f', '-'], { input: script, signal, timeoutMs: this.#timeoutMs });
    if (r.code !== 0) throw new AgentError('ERR_INVALID_ARGUMENT', `nft -c rejected the table: ${firstLines(r.stderr)}`);
  }

  /** The live table as nft's JSON; ERR_NOT_FOUND when it does not exist. */
  async listJson(table: string, signal: AbortSignal): Promise<NftDocument> {
    const r = await this.#run.run(['nft', '-j', 'list', 'table', 'ip', table], { signal, timeoutMs: this.#timeoutMs });
    if (r.code !== 0) {
      if (/No such file or directory/.test(r.stderr)) throw new AgentError('ERR_NOT_FOUND', `nftables table "ip ${table}" does not exist`);
      throw new AgentError('ERR_INTERNAL', `nft list table failed: ${firstLines(r.stderr)}`);
    }
    try {
      return JSON.parse(r.stdout) as NftDocument;
    } catch (err) {
      throw new AgentError('ERR_INTERNAL', 'nft -j printed invalid JSON', { cause: err });
    }
  }

  /** The table in nft's own text form (what `nodelet proxy rules` prints). */
  async listText(table: string, signal: AbortSignal): Promise<string> {
    const r = await this.#run.run(['nft', 'list', 'table', 'ip', table], { signal, timeoutMs: this.#timeoutMs });
    if (r.code !== 0) {
      if (/No such file or directory/.test(r.stderr)) throw new AgentError('ERR_NOT_FOUND', `nftables table "ip ${table}" does not exist`);
      throw new AgentError('ERR_INTERNAL', `nft list table failed: ${firstLines(r.stderr)}`);
    }
    return r.stdout;
  }
}

function firstLines(s: string): string {
  return s.trim().split('\n').slice(0, 6).join('\n');
}

/** `nft -j` output: a list of one-key objects (`table`, `chain`, `rule`, `set`, `map`, `metainfo`). */
export interface NftDocument {
  nftables: Array<Record<string, Record<string, unknown>>>;
}

/** The live entries of every affinity set, to carry into the next table. */
export function affinityEntries(doc: NftDocument): Map<string, AffinityEntry[]> {
  const out = new Map<string, AffinityEntry[]>();
  for (const o of doc.nftables) {
    const set = o.set as { name?: string; elem?: unknown[] } | undefined;
    if (!set?.name || !isAffinitySet(set.name) || !Array.isArray(set.elem)) continue;
    const entries: AffinityEntry[] = [];
    for (const e of set.elem) {
      const inner = (e as { elem?: { val?: unknown; expires?: unknown } }).elem;
      if (inner && typeof inner.val === 'string' && typeof inner.expires === 'number' && inner.expires > 0) entries.push({ ip: inner.val, expiresS: inner.expires });
    }
    if (entries.length) out.set(set.name, entries);
  }
  return out;
}

/** The `ip . proto . port` keys of a verdict map in the live table (for `nodelet doctor` and tests). */
export function mapKeys(doc: NftDocument, map: string): string[] {
  const m = doc.nftables.find((o) => (o.map as { name?: string } | undefined)?.name === map)?.map as { elem?: unknown[] } | undefined;
  return (m?.elem ?? []).map((pair) => {
    let key = (pair as unknown[])[0] as { concat?: unknown[]; elem?: { val?: unknown } } | string | number;
    // An element with a comment is wrapped: { elem: { val: <key>, comment } }.
    if (typeof key === 'object' && key && key.elem) key = key.elem.val as typeof key;
    return typeof key === 'object' && key && Array.isArray(key.concat) ? key.concat.join(' . ') : String(key);
  });
}
