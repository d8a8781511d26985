// The client's resource list (@nodelet/api RESOURCES) and the server's table (RESOURCE_DEFS)
// describe the same kinds: every kind a client addresses is served under the same names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESOURCES } from '@nodelet/api';
import { RESOURCE_DEFS } from './resources.js';

test('every client resource is served with the same names, scope and subresources', () => {
  const wrong: string[] = [];
  for (const r of RESOURCES) {
    const d = RESOURCE_DEFS.find((x) => x.group === r.group && x.version === r.version && x.plural === r.plural);
    if (!d) {
      wrong.push(`${r.group}/${r.version}/${r.plural}: not served`);
      continue;
    }
    const pick = (o: { kind: string; singular: string; namespaced: boolean; shortNames?: readonly string[] }): string => JSON.stringify([o.kind, o.singular, o.namespaced, o.shortNames ?? []]);
    if (pick(d) !== pick(r)) wrong.push(`${r.plural}: client ${pick(r)}, server ${pick(d)}`);
    const served = new Set(d.subresources.map((s) => s.name));
    for (const s of r.subresources ?? []) if (!served.has(s)) wrong.push(`${r.plural}/${s}: subresource not served`);
  }
  assert.deepEqual(wrong, []);
});
