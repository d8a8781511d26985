// docs/api.md's resource tables are the served table (RESOURCE_DEFS) written out: this test renders
// them and fails when the doc says something else, so a kind added here cannot be missing there (or
// a kind the doc calls "not built" be served). `UPDATE_GOLDEN=1` rewrites the section, as the CLI's
// golden tables do; read the diff before committing it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { RESOURCE_VERBS, type ResourceDef } from './resource.js';
import { RESOURCE_DEFS } from './resources.js';

const DOC = fileURLToPath(new URL('../../../docs/api.md', import.meta.url));
const BEGIN = '<!-- resource tables: rendered from RESOURCE_DEFS by control-plane/src/apiserver/api-doc.test.ts -->';
const END = '<!-- end of the rendered resource tables -->';

function verbsOf(verbs: readonly string[] | undefined): string {
  if (!verbs || RESOURCE_VERBS.every((v) => verbs.includes(v))) return 'all';
  return [...verbs].sort().join(', ');
}

function row(d: ResourceDef): string {
  const subs = d.subresources.map((s) => `\`${s.name}\` (${[...(s.verbs ?? [])].sort().join(', ')})`).join(', ');
  return `| ${d.kind} | \`${d.plural}\` | ${d.namespaced ? 'Namespaced' : 'Cluster'} | ${(d.shortNames ?? []).join(', ')} | ${verbsOf(d.verbs)} | ${subs} |`;
}

/** The tables, one per group version in the order the served table first names it. */
function renderResourceTables(defs: readonly ResourceDef[]): string {
  const byGv = new Map<string, ResourceDef[]>();
  for (const d of defs) {
    const gv = d.group ? `${d.group}/${d.version}` : d.version;
    byGv.set(gv, [...(byGv.get(gv) ?? []), d]);
  }
  const out: string[] = [];
  for (const [gv, list] of byGv) {
    const [first] = list;
    const heading = first!.group ? `### ${first!.group} / ${first!.version}  (/apis/${gv})` : `### core / ${first!.version}  (/api/${gv})`;
    out.push(heading, '', '| Kind | Resource | Scope | Short names | Verbs | Subresources |', '|---|---|---|---|---|---|', ...list.map(row), '');
  }
  return out.join('\n');
}

test('docs/api.md lists exactly the served kinds, verbs and subresources (RESOURCE_DEFS)', () => {
  const doc = readFileSync(DOC, 'utf8');
  const a = doc.indexOf(BEGIN);
  const b = doc.indexOf(END);
  assert.ok(a >= 0 && b > a, `docs/api.md lacks the markers around its resource tables (${BEGIN} … ${END})`);
  const rendered = `${BEGIN}\n\n${renderResourceTables(RESOURCE_DEFS)}\n${END}`;
  const current = doc.slice(a, b + END.length);
  if (process.env['UPDATE_GOLDEN'] === '1' && current !== rendered) writeFileSync(DOC, doc.slice(0, a) + rendered + doc.slice(b + END.length));
  else assert.equal(current, rendered, 'docs/api.md is out of date with RESOURCE_DEFS: rerun this test with UPDATE_GOLDEN=1 and read the diff');
});
