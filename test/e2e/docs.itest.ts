// nodelet-test: long — `make up` on the default ports and the README typed line by line (issue 32).
// The docs test: `make up` as the README says, then every fenced `sh` block of the docs in RUN
// (README.md first) typed in order into one bash session, as a reader would; a command that fails
// is reported with its doc file and line. A command whose comment says `prints <word>` must print
// it. Blocks marked `<!-- docs-test: skip (why) -->` are not run (doc-blocks.ts); every block of
// a doc not in RUN is marked so (doc-blocks.test.ts). Each doc starts in a new empty directory, as
// a reader who opens that page (files a page creates do not meet the next page's). `make down` runs
// afterwards whatever happened. The lab uses the default ports and /var/lib/nodelet/lab, so the
// test refuses to start when a lab is already there rather than take it down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { execFile } from 'node:child_process';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { DEFAULT_LAB_STATE_DIR } from '@nodelet/lab-runtime';
import { REPO_ROOT, shBlocks } from './doc-blocks.js';
import { DocShell, type Typed } from './doc-shell.js';
import { RUN } from './docs-run.js';

/** A command that fails is typed again for this long (metrics not scraped yet, a pod not Ready yet). */
const RETRY_MS = 60_000;
const COMMAND_TIMEOUT_MS = 180_000;

/** The tags of the machine's default image store (`nodelet image ls -q`), which images.md's build writes to. */
function storeTags(): Promise<string[]> {
  return new Promise((done) => {
    execFile(join(REPO_ROOT, 'bin', 'nodelet-dev'), ['image', 'ls', '-q'], { timeout: 60_000 }, (err, stdout) => done(err ? [] : stdout.split('\n').filter(Boolean)));
  });
}

/** Standard output of a command, or '' when it fails. */
function output(cmd: string, args: string[]): Promise<string> {
  return new Promise((done) => execFile(cmd, args, { timeout: 10_000 }, (err, stdout) => done(err ? '' : stdout)));
}

/** The IPv4 addresses of the default route's interface: the lab node's IP is one of them. */
async function nodeAddresses(): Promise<string[]> {
  const routes = JSON.parse((await output('ip', ['-j', '-4', 'route', 'show', 'default'])) || '[]') as { dev?: string }[];
  const dev = routes[0]?.dev;
  if (!dev) return [];
  const links = JSON.parse((await output('ip', ['-j', '-4', 'addr', 'show', 'dev', dev])) || '[]') as { addr_info?: { local?: string }[] }[];
  return links.flatMap((l) => (l.addr_info ?? []).flatMap((a) => (a.local ? [a.local] : [])));
}

/**
 * Listeners on the ports the lab takes (API 6443, registry 5000, node API 10250, healthz 10248,
 * the node-local DNS on :53 of the node's address): another process there makes a README command
 * fail for a reason that is not the doc's, so the test says so before it starts. A resolver on
 * :53 of another address (systemd-resolved's loopback one, a test agent's on its own bridge) does
 * not stop the lab binding its own.
 */
async function portsTaken(): Promise<string[]> {
  const dnsAddresses = new Set(['0.0.0.0', '*', '[::]', ...(await nodeAddresses())]);
  const lines = (await output('ss', ['-Hlntup'])).split('\n').map((l) => l.replace(/\s+/g, ' ').trim());
  return lines.filter((l) => {
    const local = l.split(' ')[4] ?? '';
    const at = local.lastIndexOf(':');
    const [addr, port] = [local.slice(0, at).replace(/%.*$/, ''), local.slice(at + 1)];
    return ['6443', '5000', '10250', '10248'].includes(port) || (port === '53' && dnsAddresses.has(addr));
  });
}

/**
 * What a doc's example makes on the host outside the lab and removes in its own last line
 * (docs/cni.md: a netns, the bridge its plugin creates, a config dir); removed here as well when a
 * block failed before that line. Each must be absent when the test starts, so it removes only its own.
 */
const EXAMPLE_LEFTOVERS: { what: string; path: string; remove: [string, string[]] }[] = [
  { what: 'netns demo', path: '/run/netns/demo', remove: ['ip', ['netns', 'del', 'demo']] },
  { what: 'bridge demo0', path: '/sys/class/net/demo0', remove: ['ip', ['link', 'del', 'demo0']] },
  { what: '/tmp/net.d', path: '/tmp/net.d', remove: ['rm', ['-r', '/tmp/net.d']] },
];

function make(target: string): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile('make', [target], { cwd: REPO_ROOT, timeout: 15 * 60_000, maxBuffer: 32 << 20 }, (err, stdout, stderr) => {
      done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
    });
  });
}

test('the docs run as typed against make up', async (t) => {
  if (!requireRoot(t)) return;
  assert.ok(!existsSync(DEFAULT_LAB_STATE_DIR), `a lab is in ${DEFAULT_LAB_STATE_DIR} (running, or left by a run that was killed): make down first (the docs test starts its own)`);
  const taken = await portsTaken();
  assert.deepEqual(taken, [], 'the lab\'s ports are in use by another process (a lab or a test agent left running?)');
  assert.deepEqual(EXAMPLE_LEFTOVERS.filter((l) => existsSync(l.path)).map((l) => l.what), [], 'what a doc example creates is already there');
  const started = Date.now();
  const cwd = mkdtempSync(join(tmpdir(), 'nodelet-docs-'));
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `/usr/local/bin:${process.env.PATH ?? '/usr/bin:/bin'}` };
  delete env.KUBECONFIG;
  const shell = new DocShell(cwd, env);
  const tagsBefore = await storeTags();
  t.after(async () => {
    await shell.close();
    // What the docs built into the machine's store goes again; the lab images stay.
    const built = (await storeTags()).filter((tag) => !tagsBefore.includes(tag) && !/^(busybox|pause):/.test(tag));
    if (built.length) await new Promise((done) => execFile(join(REPO_ROOT, 'bin', 'nodelet-dev'), ['image', 'rm', ...built], { timeout: 60_000 }, done));
    for (const l of EXAMPLE_LEFTOVERS.filter((x) => existsSync(x.path))) {
      await new Promise((done) => execFile(l.remove[0], l.remove[1], { timeout: 10_000 }, done));
      t.diagnostic(`removed ${l.what}, which a failed doc example left`);
    }
    const down = await make('down');
    t.diagnostic(`make down (${down.code}): ${down.output.trim().split('\n').slice(-3).join(' | ')}`);
    rmSync(cwd, { recursive: true, force: true });
  });

  const up = await make('up');
  assert.equal(up.code, 0, `make up failed:\n${up.output.slice(-4000)}`);
  assert.match(up.output, /nodelet on PATH: \/usr\/local\/bin\/nodelet/);
  t.diagnostic(`make up: ${Date.now() - started} ms`);

  let ran = 0;
  let skipped = 0;
  for (const [i, file] of RUN.entries()) {
    const docStarted = Date.now();
    const dir = join(cwd, `${i}-${file.replace(/[^A-Za-z0-9.]+/g, '-')}`);
    mkdirSync(dir);
    assert.equal((await shell.type(`cd ${dir}`, 10_000)).code, 0);
    for (const block of shBlocks(file)) {
      if (block.mark) {
        skipped++;
        continue;
      }
      for (const c of block.commands) {
        const where = `${file}:${c.line}`;
        const type = (): Promise<Typed> => shell.type(c.text, COMMAND_TIMEOUT_MS).catch((e: Error) => {
          throw new Error(`${where}: \`${c.text}\` did not end: ${e.message}`);
        });
        const first = Date.now();
        let r = await type();
        let tries = 1;
        const ok = (x: typeof r): boolean => x.code === 0 && (!c.expect || x.output.includes(c.expect));
        while (!ok(r) && Date.now() - first < RETRY_MS) {
          await new Promise((res) => setTimeout(res, 3_000));
          r = await type();
          tries++;
        }
        assert.equal(r.code, 0, `${where}: \`${c.text}\` exited ${r.code} (${tries} tries):\n${r.output.slice(-3000)}`);
        if (c.expect) assert.ok(r.output.includes(c.expect), `${where}: \`${c.text}\` does not print ${c.expect}:\n${r.output.slice(-3000)}`);
        if (tries > 1) t.diagnostic(`${where}: typed ${tries} times`);
        ran++;
      }
    }
    t.diagnostic(`${file}: ${Date.now() - docStarted} ms`);
  }
  t.diagnostic(`${ran} commands run, ${skipped} blocks marked skip, ${Date.now() - started} ms in all`);
});
