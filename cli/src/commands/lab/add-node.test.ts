// labAddNode's refusals that need no lab: the network placements a node sharing the host's namespace cannot have.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasCode } from '@nodelet/base';
import { labAddNode } from './add-node.js';

test('behindRouter and podNetwork without netns are refused before anything starts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'nodelet-add-node-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Never dialled: the refusal comes first.
  writeFileSync(join(dir, 'admin.kubeconfig'), [
    'apiVersion: v1', 'kind: Config', 'current-context: x',
    'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
    'users: [{name: u, user: {token: t}}]', 'contexts: [{name: x, context: {cluster: c, user: u}}]', '',
  ].join('\n'));
  const base = { stateDir: join(dir, 'node'), adminKubeconfig: join(dir, 'admin.kubeconfig'), nodeName: 'n2', bridge: 'nlx1', nodeApiPort: 1, healthzPort: 2 };
  for (const [field, extra] of [['behindRouter', { behindRouter: '10.216.0.0/29' }], ['podNetwork', { podNetwork: 'vxlan' as const }]] as const) {
    await assert.rejects(labAddNode({ ...base, ...extra }), (e: unknown) => hasCode(e, 'ERR_INVALID_ARGUMENT') && new RegExp(`^${field} .*needs netns`).test((e as Error).message), field);
  }
  assert.equal(existsSync(join(dir, 'node')), false, 'no state dir was made');
});
