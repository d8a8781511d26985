/**
 * The agent's folders import one another without a cycle (issue 24: runtime/ ↔ status/ and
 * runtime/ ↔ prober/ went round through the shared pod types, which now live in kubecontainer/).
 * eslint.config.js (AGENT_FOLDERS) names the edges that must never exist; a cycle through any other
 * folders can only be seen on the whole graph, so it is checked here. Test files are left out: a
 * test may reach across folders to build its fixtures. The files directly in agent/src (agent.ts,
 * host.ts, the entry points) are the composition root and count one node each.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = dirname(fileURLToPath(import.meta.url));

/** Every non-test TypeScript source under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !/\.i?test\.ts$/.test(e.name) ? [p] : [];
  });
}

/** The folder of agent/src a file belongs to, or the file's own name when it sits at the top. */
function nodeOf(file: string): string {
  const parts = relative(SRC, file).split(sep);
  return parts.length === 1 ? parts[0]! : `${parts[0]}/`;
}

/** Folder → folders it imports, each edge with one import that makes it (for the failure message). */
function folderGraph(): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const file of sources(SRC)) {
    const from = nodeOf(file);
    const edges = graph.get(from) ?? new Map<string, string>();
    graph.set(from, edges);
    for (const m of readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.\.?\/[^'"]+)['"]/g)) {
      const target = resolve(dirname(file), m[1]!);
      if (!target.startsWith(SRC + sep)) continue;
      const to = nodeOf(target.replace(/\.js$/, '.ts'));
      if (to !== from && !edges.has(to)) edges.set(to, `${relative(SRC, file)} imports '${m[1]}'`);
    }
  }
  return graph;
}

/** One cycle of the graph as its edges' witnesses, or undefined when it has none (depth-first search). */
function findCycle(graph: Map<string, Map<string, string>>): string[] | undefined {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string[] | undefined => {
    state.set(n, 'open');
    path.push(n);
    for (const [to] of graph.get(n) ?? []) {
      if (state.get(to) === 'open') {
        const loop = [...path.slice(path.indexOf(to)), to];
        return loop.slice(1).map((b, i) => graph.get(loop[i]!)!.get(b)!);
      }
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    path.pop();
    state.set(n, 'done');
    return undefined;
  };
  for (const n of graph.keys()) {
    if (state.has(n)) continue;
    const found = visit(n);
    if (found) return found;
  }
  return undefined;
}

test('the folders of agent/src import one another without a cycle', () => {
  const graph = folderGraph();
  assert.ok(graph.has('runtime/') && graph.has('status/'), 'the walk found the agent folders');
  const cycle = findCycle(graph);
  assert.equal(cycle, undefined, `folder cycle:\n  ${cycle?.join('\n  ')}\nmove what both sides share to kubecontainer/ or depend on an interface`);
});

test('kubecontainer/ imports no other folder of the agent', () => {
  assert.deepEqual([...(folderGraph().get('kubecontainer/')?.values() ?? [])], []);
});
