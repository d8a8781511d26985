// The console with 100 nodes and 3,000 pods (test/e2e/console-scale.ts: objects created through
// the API, never run): the pods and nodes tables are virtualised — a bounded number of rows drawn
// whatever the count — and scrolling reaches the last pod. First paint is printed, not asserted (a
// shared machine); bench/console.ts measures it beside an empty cluster (docs/console.md, "Scale").
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { chromium } from 'playwright-core';
import { cleanups } from '@nodelet/base/testing';
import { firstPaintOfPods, podName, startScaleCluster } from './console-scale.js';

const CHROMIUM = '/usr/bin/chromium';
const NODES = 100;
const PODS = 3000;
/** Rows drawn at most: the box's 15 rows and 8 either side, with room for a partly scrolled box. */
const MAX_ROWS = 40;

test('console: 3,000 pods and 100 nodes draw a bounded number of rows; scrolling reaches the last pod', { skip: existsSync(CHROMIUM) ? false : `${CHROMIUM} missing (apt-get install chromium)`, timeout: 240_000 }, async (t) => {
  const cleanup = cleanups(t);
  const cluster = await startScaleCluster({ nodes: NODES, pods: PODS });
  cleanup(() => cluster.close());
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  cleanup(() => browser.close());
  const violations: string[] = [];
  const { page, ms } = await firstPaintOfPods(browser, cluster.server.url, cluster.server.token, violations);
  t.diagnostic(`first paint of the pods view: ${Math.round(ms)} ms`);

  await page.locator('#pods-title').filter({ hasText: `Pods (${PODS})` }).waitFor({ timeout: 60_000 });
  await page.locator('#nodes-title').filter({ hasText: `Nodes (${NODES})` }).waitFor();
  const rows = page.locator('#pods tbody tr[data-pod]');
  const drawn = await rows.count();
  assert.ok(drawn > 0 && drawn <= MAX_ROWS, `${drawn} pod rows drawn for ${PODS} pods`);
  assert.equal(await page.locator('#pods table').getAttribute('aria-rowcount'), String(PODS + 1));
  assert.equal(await rows.first().getAttribute('data-pod'), podName(0, PODS));
  const nodeRows = await page.locator('#nodes tbody tr[data-node]').count();
  assert.ok(nodeRows > 0 && nodeRows <= MAX_ROWS, `${nodeRows} node rows drawn for ${NODES} nodes`);

  // Scroll the pods' box to its end: the last pod is drawn, the first is not, still bounded.
  const last = podName(PODS - 1, PODS);
  await page.locator('#pods .vtable').evaluate((el) => el.scrollTo({ top: el.scrollHeight }));
  await page.locator(`#pods tr[data-pod="${last}"]`).waitFor();
  assert.ok(await page.locator(`#pods tr[data-pod="${last}"]`).isVisible(), 'the last pod is in view');
  assert.equal(await page.locator(`#pods tr[data-pod="${podName(0, PODS)}"]`).count(), 0);
  const after = await rows.count();
  assert.ok(after <= MAX_ROWS, `${after} pod rows drawn at the end`);
  // The middle, by keyboard: the box takes focus and scrolls with the keys.
  await page.locator('#pods .vtable').focus();
  await page.keyboard.press('Home');
  await page.locator(`#pods tr[data-pod="${podName(0, PODS)}"]`).waitFor();
  assert.deepEqual(violations, []);
});
