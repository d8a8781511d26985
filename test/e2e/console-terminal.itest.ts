// The console's terminal in a real browser (Debian's chromium, headless, playwright-core) against a
// lab cluster (`nodelet lab up` on private ports, state dir and bridge: API server → agent →
// containerd): signed in with a service account's token, the terminal on a busybox pod answers
// `echo hi`, follows a resize of its panel (`stty size` in the shell), and `exit` ends it; the pod's
// journey lights the agent's stages (agent, CNI, CRI, runc) from the node's own spans; its logs show
// the line it printed at start and, followed, one written after they opened; the create form's image
// list offers the lab registry's busybox; the node's
// row shows its Lease age and `kubectl top` figures from metrics.k8s.io. The token
// reaches the API server only as the WebSocket subprotocol; the page runs under the served CSP
// (any violation fails the test).
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { pollUntil } from '@nodelet/base';
import { freePort } from '@nodelet/base/testing';
import { labDown, labUp, type LabUpResult } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { kubectl, type Kubectl } from './helpers.js';

const CHROMIUM = '/usr/bin/chromium';
const root = new URL('../..', import.meta.url).pathname;

let skipReason: string | false = false;
requireRoot({ skip: (m) => (skipReason = m ?? 'skipped') });
if (!skipReason && !existsSync(CHROMIUM)) skipReason = `${CHROMIUM} missing (apt-get install chromium)`;
if (!skipReason && !existsSync(join(root, 'build', 'console', 'index.html'))) skipReason = 'the console is not built (make console)';

describe('console terminal on a lab node', { skip: skipReason, timeout: 300_000 }, () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-term-'));
  let lab: Parameters<typeof labUp>[0];
  let up: LabUpResult;
  let k: Kubectl;
  let browser: Browser | undefined;
  let token: string;

  before(async () => {
    const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.237.0.0/16', bridge: 'nle-term', nodeName: 'term-node', nodeApiPort: nodePort, healthzPort };
    up = await labUp(lab);
    k = kubectl(up.kubeconfig);
    // A first log line at start; the test writes another into its stdout (PID 1's) once the logs are open.
    await k('create', 'deployment', 'shell', `--image=${up.images.busybox}`, '--', 'sh', '-c', 'echo console-log-start; exec sleep 3600');
    await k('create', 'serviceaccount', 'console-user');
    // cluster-admin: the page's pod watch is cluster-wide (docs/console.md).
    await k('create', 'clusterrolebinding', 'e2e-console-user', '--clusterrole=cluster-admin', '--serviceaccount=default:console-user');
    token = (await k('create', 'token', 'console-user', '--duration=1h')).trim();
    await k('wait', '--for=condition=Available', 'deployment/shell', '--timeout=120s');
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  });

  after(async () => {
    await browser?.close();
    if (k) await k('delete', 'deployment', '--all', '--wait=true', '--timeout=60s').catch(() => undefined);
    if (k) await k('delete', 'clusterrolebinding', 'e2e-console-user').catch(() => undefined);
    if (lab) await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });

  /** The terminal's text, row by row (the DOM renderer's rows). */
  const screen = (page: Page): Promise<string[]> => page.locator('#terminal .xterm-rows > div').allTextContents();

  it('image list; terminal: echo hi round trip, resize, exit; journey; logs followed; node figures', async (t) => {
    const context = await browser!.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // What went wrong between the page and the server, said as it happens: when a step below
    // times out, these lines say which call failed (a dropped connection, a refusal).
    page.on('requestfailed', (r) => void (r.failure()?.errorText !== 'net::ERR_ABORTED' && t.diagnostic(`page: ${r.method()} ${new URL(r.url()).pathname} failed: ${r.failure()?.errorText}`))); // ERR_ABORTED: the page's own (a closed log panel)
    page.on('response', (r) => void (r.status() >= 400 && t.diagnostic(`page: ${r.request().method()} ${new URL(r.url()).pathname} answered ${r.status()}`)));
    const violations: string[] = [];
    page.on('console', (m) => void (/Content Security Policy/i.test(m.text()) && violations.push(m.text())));
    page.on('pageerror', (e) => void violations.push(`page error: ${e.message}`));
    const sockets: string[] = [];
    page.on('websocket', (ws) => void sockets.push(ws.url()));
    assert.equal((await page.goto(`${up.server}/ui/`))?.status(), 200);
    await page.getByLabel('Bearer token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#user strong').filter({ hasText: 'system:serviceaccount:default:console-user' }).waitFor();

    // The create form's image list holds the lab registry's busybox (its catalogue, read as this
    // user through the API server); a click takes it. Nothing is created.
    await page.getByRole('button', { name: 'Create Deployment' }).click();
    const image = page.getByRole('combobox', { name: 'Image' });
    await page.locator('#dep-image-note').filter({ hasText: /^[1-9]\d* from the registry/ }).waitFor();
    await image.fill('busybox');
    await page.getByRole('listbox', { name: 'Images' }).locator(`[data-image="${up.images.busybox}"]`).click();
    assert.equal(await image.inputValue(), up.images.busybox);
    await page.getByRole('button', { name: 'Close the form' }).click();

    const pod = await page.locator('li[data-pod][data-phase="Running"]').first().getAttribute('data-pod', { timeout: 60_000 });
    await page.locator('#workloads').getByRole('button', { name: `Terminal in ${pod}` }).click();
    await page.locator('#terminal-status').filter({ hasText: 'connected (v5.channel.k8s.io)' }).waitFor({ timeout: 30_000 });
    // One exec socket beside the page's watches (each a WebSocket too); no socket's URL holds the token.
    assert.equal(sockets.filter((u) => /\/pods\/[^/]+\/exec\?/.test(u)).length, 1, sockets.join('\n'));
    for (const u of sockets) assert.ok(!u.includes(token) && u.startsWith('wss://'), u);

    await page.locator('#terminal .xterm-helper-textarea').focus();
    await page.keyboard.type('echo hi\n');
    await pollUntil('"hi" on its own line', async () => ((await screen(page)).some((l) => l.trim() === 'hi') ? true : undefined), { timeoutMs: 20_000 });

    // Resize: the panel made taller, the terminal refits and the tty follows.
    const rowsBefore = await page.evaluate('document.querySelectorAll("#terminal .xterm-rows > div").length');
    await page.evaluate('document.querySelector("#terminal .terminal-box").style.height = "36rem"');
    const rows = await pollUntil('more rows', async () => {
      const n = (await page.evaluate('document.querySelectorAll("#terminal .xterm-rows > div").length')) as number;
      return n > (rowsBefore as number) ? n : undefined;
    }, { timeoutMs: 10_000 });
    await page.keyboard.type('stty size\n');
    await pollUntil(`stty size to say ${rows} rows`, async () => ((await screen(page)).some((l) => new RegExp(`^${rows} \\d+$`).test(l.trim())) ? true : undefined), { timeoutMs: 20_000 });

    await page.keyboard.type('exit\n');
    await page.locator('#terminal-status').filter({ hasText: 'ended' }).waitFor({ timeout: 20_000 });
    await page.locator('#terminal').getByRole('button', { name: 'Close' }).click();
    // The pod's journey on a real node: the agent's stages are lit too (the hollow node of
    // console.itest.ts has no node API the server can reach), from the node's own spans.
    await page.locator('#workloads').getByRole('button', { name: `Journey of ${pod}` }).click();
    const journey = page.locator('#journey');
    for (const stage of ['API server', 'scheduler', 'agent', 'CNI', 'CRI', 'runc', 'Ready']) await journey.locator(`[data-stage="${stage}"][data-lit="true"]`).waitFor({ timeout: 20_000 });
    // NODELET_CONSOLE_SCREENSHOTS=<dir>: the journey picture of docs/console.md, every stage lit.
    if (process.env.NODELET_CONSOLE_SCREENSHOTS) await page.screenshot({ path: join(process.env.NODELET_CONSOLE_SCREENSHOTS, 'console-journey.png'), fullPage: true });
    await journey.getByRole('button', { name: 'Close' }).click();
    // Logs through the node's real log file: the line printed at start, then, followed, one written
    // after the panel opened (into the container's stdout, PID 1's, by an exec).
    await page.locator('#workloads').getByRole('button', { name: `Logs of ${pod}` }).click();
    const log = page.locator('#logs pre');
    await log.filter({ hasText: 'console-log-start' }).waitFor({ timeout: 20_000 });
    assert.ok(!(await log.textContent())!.includes('console-log-followed'));
    await k('exec', pod!, '--', 'sh', '-c', 'echo console-log-followed >/proc/1/fd/1');
    await log.filter({ hasText: 'console-log-followed' }).waitFor({ timeout: 20_000 });
    await page.locator('#logs').getByRole('button', { name: 'Close' }).click();
    // The nodes table's Lease age and `kubectl top node` figures from metrics.k8s.io (the control
    // plane's metrics-server scrapes the agent every 15 s and needs two samples: checked last).
    const nodeRow = page.locator('[data-node="term-node"]');
    await nodeRow.locator('[data-lease-age="yes"]').waitFor();
    await nodeRow.locator('[data-top-cpu$="m"]').waitFor({ timeout: 60_000 });
    assert.match((await nodeRow.locator('[data-top-memory]').getAttribute('data-top-memory')) ?? '', /^\d+Mi$/);
    assert.deepEqual(violations, []);
    await context.close();
  });
});
