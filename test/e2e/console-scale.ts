/**
 * The console at scale, shared by test/e2e/console-scale.itest.ts and bench/console.ts: an API
 * server (in process, port 0, plain HTTP on loopback, serving a freshly built console) holding
 * `nodes` Node objects and `pods` pods bound to them round-robin, created through the API and never
 * run (no agent, no scheduler: the page reads objects, and these cost nothing to keep); and the
 * time from navigating to /ui/ with a signed-in tab until the pods view shows its rows.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startTestApiServer, type TestApiServer } from '../../control-plane/src/apiserver/testing/test-server.js';

const root = new URL('../..', import.meta.url).pathname;

export interface ScaleCluster {
  server: TestApiServer;
  close(): Promise<void>;
}

/** The pods' names sort in creation order: pod-0000 … pod-2999. */
export const podName = (i: number, total: number): string => `pod-${String(i).padStart(Math.max(4, String(total - 1).length), '0')}`;

/** Builds the console and starts a server holding `nodes` nodes and `pods` pods in `default`. */
export async function startScaleCluster(o: { nodes: number; pods: number; concurrency?: number }): Promise<ScaleCluster> {
  const dir = await mkdtemp(join(tmpdir(), 'nodelet-console-scale-'));
  let server: TestApiServer | undefined;
  const close = async (): Promise<void> => {
    try {
      await server?.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  };
  try {
    const built = spawnSync(process.execPath, [join(root, 'console', 'build.mjs'), '--out', join(dir, 'console')], { encoding: 'utf8' });
    if (built.status !== 0) throw new Error(`console build failed: ${built.stderr}`);
    server = await startTestApiServer({ console: { dir: join(dir, 'console') } });
    const s = server;
    const create = async (path: string, body: unknown): Promise<void> => {
      const r = await s.call('POST', path, body);
      if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.json)}`);
    };
    const nodeName = (i: number): string => `hollow-${String(i).padStart(3, '0')}`;
    await inParallel(o.nodes, o.concurrency ?? 16, (i) =>
      create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName(i), labels: { 'kubernetes.io/hostname': nodeName(i) } } }),
    );
    await inParallel(o.pods, o.concurrency ?? 16, (i) =>
      create('/api/v1/namespaces/default/pods', {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: podName(i, o.pods), labels: { app: `app-${i % 30}` } },
        spec: { ...(o.nodes ? { nodeName: nodeName(i % o.nodes) } : {}), containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
      }),
    );
    return { server: s, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function inParallel(n: number, width: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, n) }, async () => {
      while (next < n) await f(next++);
    }),
  );
}

/**
 * A tab signed in as `token` (the token put in sessionStorage, as the sign-in form does), then
 * navigated to /ui/ again: returns the page and the milliseconds from that navigation's start until
 * the pods view painted its rows (or said the namespace is empty), read in the page
 * (`performance.now()` on the animation frame that first shows them).
 */
export async function firstPaintOfPods(browser: Browser, url: string, token: string, violations: string[]): Promise<{ page: Page; ms: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && violations.push(m.text())));
  page.on('pageerror', (e) => void violations.push(`page error: ${e.message}`));
  await page.goto(`${url}/ui/`);
  await page.evaluate(`sessionStorage.setItem('nodelet-console-token', ${JSON.stringify(token)})`);
  await page.goto(`${url}/ui/`);
  // A function, not a string: Playwright evaluates a string predicate with eval in the page,
  // which the console's CSP (no 'unsafe-eval') refuses. Typed without the DOM library.
  const painted = (): number => {
    const d = (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document;
    return d.querySelector('#pods tr[data-pod]') || d.querySelector('#pods .hint') ? performance.now() : 0;
  };
  const handle = await page.waitForFunction(painted, undefined, { polling: 'raf', timeout: 60_000 });
  return { page, ms: (await handle.jsonValue()) as number };
}
