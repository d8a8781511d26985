/**
 * nodelet under a REAL systemd (PID 1 of a systemd-nspawn container on a cached debootstrap rootfs,
 * docs/reference/systemd-testing.md). Inside, with the real CLI of the built checkout:
 *
 *   install server ─▶ active (Type=notify) ─▶ reinstall changes nothing ─▶ token create ─▶ join
 *   ─▶ agent + containerd active, node Ready ─▶ systemd-analyze verify silent ─▶ a pod runs
 *   ─▶ kill -9 of each main process: restarted, node Ready again, the pod's container untouched
 *   ─▶ hung event loop (test hook): "Watchdog timeout" and a restart ─▶ JSON logs in the journal
 *   ─▶ uninstall --purge: units gone, no file of nodelet's left
 *
 * Needs root, systemd-nspawn, zstd, debootstrap (rootfs built once, ~40 s) and `make build` (dist/).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { TEST_HANG_FILE_ENV, TEST_HANG_MS_ENV } from '@nodelet/systemd';
import { bootSystemd, nspawnUnavailable, REPO_ROOT, type SystemdBox } from './nspawn.js';
import {
  hierarchiesWithKubepods, kubectlIn, kubectlJson, lastPodSyncError, listInstallDirs, makeCgroupControllersWritable, nodeletIn, readyCondition,
  removeBoxKubepods, removeOurPodCgroups, RUNTIME_BINDS, runtimeUnavailable, unitState,
} from './box-tools.js';

// The tree mounted at /opt/nodelet; NODELET_SYSTEMD_ITEST_TREE lets a developer point at a private built copy.
const TREE = process.env.NODELET_SYSTEMD_ITEST_TREE ?? REPO_ROOT;
const NODE = 'nspawn-node';
const ADMIN = '/var/lib/nodelet/server/admin.kubeconfig';
const SERVER = 'nodelet-server.service';
const AGENT = 'nodelet-agent.service';
// Created by containerd itself once it runs (its opt plugin dir; /var/lib/cni/results is containerd's
// libcni result cache): not nodelet's. The agent's IPAM state also defaults to /var/lib/cni (networks/
// nodelet-pods then shows up as a leftover) unless join points it into the state dir that --purge removes.
const CONTAINERD_OWN = new Set(['/opt/containerd', '/opt/containerd/bin', '/opt/containerd/lib', '/var/lib/cni', '/var/lib/cni/results']);
const UNITS = ['/etc/systemd/system/nodelet-server.service', '/etc/systemd/system/nodelet-agent.service', 'containerd.service'];

function skipReason(): string | undefined {
  const why = nspawnUnavailable();
  if (why) return `systemd-nspawn cannot run here: ${why}`;
  for (const f of ['cli/dist/main.js', 'control-plane/dist/main.js', 'agent/dist/main.js']) {
    if (!existsSync(join(TREE, f))) return `${join(TREE, f)} is missing: run make build`;
  }
  return runtimeUnavailable();
}

const reason = skipReason();

test('nodelet as systemd services under a real systemd (nspawn)', { skip: reason ?? false, timeout: 240_000 }, async (t) => {
  const started = Date.now();
  const lap = (what: string) => t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s  ${what}`);
  // overlayfs snapshots cannot sit on the container's tmpfs overlay: give containerd a host dir.
  const containerdRoot = mkdtempSync(join(tmpdir(), 'nodelet-sd-containerd-'));
  const hostTmp = mkdtempSync(join(tmpdir(), 'nodelet-sd-'));
  const kubepodsBefore = hierarchiesWithKubepods();
  const removeHostDirs = (): void => {
    removeOurPodCgroups(containerdRoot); // only once the container (and its pods) are gone
    const left = removeBoxKubepods(kubepodsBefore);
    if (left.length) t.diagnostic(`kubepods cgroups still in use, left in place:\n${left.join('\n')}`);
    rmSync(containerdRoot, { recursive: true, force: true });
    rmSync(hostTmp, { recursive: true, force: true });
  };
  let b: SystemdBox;
  try {
    b = await bootSystemd({
      name: 'units', tree: TREE, binds: RUNTIME_BINDS, rwBinds: [[containerdRoot, '/var/lib/containerd']],
      // runc gives every container its own session keyring; nspawn's seccomp filter denies the keyring
      // calls (keyrings are not namespaced) unless they are allowed explicitly.
      nspawnArgs: ['--system-call-filter=add_key keyctl request_key'],
    });
  } catch (err) {
    removeHostDirs(); // bootSystemd already cleaned up its own state
    throw err;
  }
  let failed = false;
  t.after(async () => {
    try {
      if (failed) {
        const j = await b.exec(['journalctl', '--no-pager', '-o', 'short-monotonic', '-n', '150', '-u', SERVER, '-u', AGENT, '-u', 'containerd.service'], { allowFail: true });
        t.diagnostic('journal of the failed run (last 150 lines):');
        for (const line of j.stdout.split('\n')) t.diagnostic(line);
      }
      await b.close();
    } finally {
      removeHostDirs();
    }
  });
  type Body = (st: { diagnostic(m: string): void }) => Promise<void>;
  const step = (name: string, opts: { skip?: string | false }, fn: Body) =>
    t.test(name, opts, async (st) => {
      try {
        await fn(st);
      } catch (err) {
        failed = true;
        throw err;
      }
    });
  lap('booted');
  const sh = (cmd: string) => b.exec(['sh', '-c', cmd]);
  await makeCgroupControllersWritable(b);
  const before = await listInstallDirs(b);

  // The server serves the lab images from <cwd>/build/images; `nodelet install server` does not pass
  // --registry-root, so run it from the checkout (a runtime drop-in: nothing under /etc).
  const haveImages = existsSync(join(TREE, 'build/images/index.json'));
  if (haveImages) {
    await sh('mkdir -p /run/systemd/system/nodelet-server.service.d && printf "[Service]\\nWorkingDirectory=/opt/nodelet\\n" > /run/systemd/system/nodelet-server.service.d/50-test-images.conf');
  }

  await step('install server: active only once READY=1; a second install changes nothing', {}, async () => {
    const first = await nodeletIn(b, ['install', 'server', '--watchdog-sec', '3', '--restart-sec', '200ms']);
    assert.match(first.stdout, /started\s+nodelet-server\.service/);
    // `systemctl start` of a Type=notify unit returns only after READY=1, so no wait is needed here.
    assert.equal((await b.exec(['systemctl', 'is-active', SERVER])).stdout.trim(), 'active');
    assert.equal((await b.exec(['systemctl', 'show', '-p', 'StatusText', '--value', SERVER])).stdout.trim(), 'serving https://127.0.0.1:6443');
    const pid = (await unitState(b, SERVER)).mainPid;
    const second = await nodeletIn(b, ['install', 'server', '--watchdog-sec', '3', '--restart-sec', '200ms']);
    assert.match(second.stdout, /nothing changed/);
    assert.doesNotMatch(second.stdout, /^(created|updated)/m);
    assert.equal((await unitState(b, SERVER)).mainPid, pid, 'a no-op install must not restart the server');
    lap('server installed');
  });

  const kubeconfig = join(hostTmp, 'admin.kubeconfig');
  await step('token create + join: agent and containerd active, node Ready in kubectl get nodes', {}, async () => {
    const tok = JSON.parse((await nodeletIn(b, ['token', 'create', '--ttl', '10m', '-o', 'json'])).stdout) as { token: string; caCertHash: string };
    const joined = await nodeletIn(b, ['join', 'https://127.0.0.1:6443', '--token', tok.token, '--ca-cert-hash', tok.caCertHash, '--node-name', NODE, '--watchdog-sec', '3', '--restart-sec', '200ms']);
    assert.match(joined.stdout, /kubeconfig written to \/etc\/nodelet\/agent\.kubeconfig \(0600\)/);
    assert.match(joined.stdout, /credential for system:node:\S+ written to \/etc\/nodelet\/agent\.token \(0600, expires /);
    assert.match(joined.stdout, /cluster CA written to \/etc\/nodelet\/pki\/ca\.crt/);
    lap('join returned');
    for (const u of ['containerd.service', AGENT]) assert.equal((await b.exec(['systemctl', 'is-active', u])).stdout.trim(), 'active', u);
    assert.equal((await b.exec(['systemctl', 'show', '-p', 'StatusText', '--value', AGENT])).stdout.trim(), `node ${NODE} serving on :10250`);
    writeFileSync(kubeconfig, (await b.exec(['cat', ADMIN])).stdout, { mode: 0o600 });
    await b.waitFor(`node ${NODE} Ready`, async () => (await readyCondition(b, kubeconfig, NODE))?.status === 'True', 30_000);
    const table = await kubectlIn(b, kubeconfig, ['get', 'nodes']);
    assert.match(table.stdout, new RegExp(`^${NODE}\\s+Ready\\b`, 'm'), table.stdout + table.stderr);
    lap('joined, node Ready');
  });

  await step('systemd-analyze verify prints nothing for every installed unit', {}, async () => {
    const r = await b.exec(['systemd-analyze', 'verify', '--man=no', ...UNITS], { allowFail: true });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(`${r.stdout}${r.stderr}`, '', 'verify must be silent (warnings count as failures)');
  });

  const podSkip = haveImages ? false : `${join(TREE, 'build/images')} is missing: run make build (lab images)`;
  let containerId = '';
  const assertPodUntouched = async (): Promise<void> => {
    // Only when the pod step was skipped (reported as a skip, which fails a CI run) is there no pod to check.
    if (podSkip) return;
    assert.ok(containerId, 'the pod step recorded no container');
    const p = await kubectlJson<{ status?: { phase?: string; containerStatuses?: Array<{ containerID?: string; restartCount?: number }> } }>(b, kubeconfig, ['get', 'pod', 'survivor']);
    assert.equal(p?.status?.phase, 'Running');
    assert.equal(p?.status?.containerStatuses?.[0]?.containerID, containerId, 'the container must survive agent and server restarts');
    assert.equal(p?.status?.containerStatuses?.[0]?.restartCount, 0);
  };
  await step('a pod runs on the node', { skip: podSkip }, async () => {
    const pod = `apiVersion: v1\nkind: Pod\nmetadata: {name: survivor, namespace: default}\nspec:\n  terminationGracePeriodSeconds: 1\n  containers:\n  - {name: sleeper, image: "127.0.0.1:5000/busybox:latest", command: [sleep, "3600"]}\n`;
    const r = await kubectlIn(b, kubeconfig, ['apply', '-f', '-'], pod);
    assert.equal(r.code, 0, r.stderr);
    try {
      await b.waitFor('pod survivor Running', async () => {
        const p = await kubectlJson<{ status?: { phase?: string; containerStatuses?: Array<{ containerID?: string }> } }>(b, kubeconfig, ['get', 'pod', 'survivor']);
        containerId = p?.status?.phase === 'Running' ? (p.status.containerStatuses?.[0]?.containerID ?? '') : '';
        return containerId !== '';
      }, 30_000);
    } catch (err) {
      throw new Error(`${(err as Error).message}; the agent says: ${await lastPodSyncError(b)}`);
    }
    lap(`pod running (${containerId.slice(0, 25)}…)`);
  });

  await step('kill -9 of each main process: systemd restarts it, the node is Ready again, the pod untouched', {}, async () => {
    for (const unit of [SERVER, AGENT]) {
      const was = await unitState(b, unit);
      const killedAt = Date.now();
      await sh(`kill -9 ${was.mainPid}`);
      await b.waitFor(`${unit} restarted`, async () => {
        const s = await unitState(b, unit);
        return s.activeState === 'active' && s.mainPid !== was.mainPid && s.nRestarts === was.nRestarts + 1;
      }, 30_000);
      const journal = (await b.exec(['journalctl', '-u', unit, '--no-pager', '-o', 'cat'])).stdout;
      assert.match(journal, /status=9\/KILL/);
      // Ready as served by the restarted server; after the agent's restart, a fresh heartbeat (written when
      // it re-registers) proves the node itself recovered.
      await b.waitFor(`node Ready after the ${unit} restart`, async () => {
        const c = await readyCondition(b, kubeconfig, NODE);
        if (c?.status !== 'True') return false;
        return unit === SERVER || Date.parse(c.lastHeartbeatTime ?? '') >= Math.floor(killedAt / 1000) * 1000;
      }, 30_000);
      lap(`${unit} restarted after kill -9`);
    }
    await assertPodUntouched();
  });

  await step('a hung event loop stops the watchdog pings: "Watchdog timeout" and a restart', {}, async () => {
    // Test-only hook (systemd/src/test-hang.ts), armed through runtime drop-ins for both units at once.
    for (const unit of [SERVER, AGENT]) {
      const once = `/run/nodelet-test-hang-${unit}`;
      const dir = `/run/systemd/system/${unit}.d`;
      await sh(`mkdir -p ${dir} && touch ${once} && printf '[Service]\\nEnvironment=${TEST_HANG_MS_ENV}=500 ${TEST_HANG_FILE_ENV}=${once}\\nLimitCORE=0\\n' > ${dir}/60-test-hang.conf`);
    }
    await b.exec(['systemctl', 'daemon-reload']);
    // A manual restart resets NRestarts, so the baseline is taken right after it (the hang starts 500 ms after READY=1).
    const restartsBefore = new Map<string, number>();
    for (const unit of [SERVER, AGENT]) {
      await b.exec(['systemctl', 'restart', unit]);
      restartsBefore.set(unit, (await unitState(b, unit)).nRestarts);
    }
    for (const unit of [SERVER, AGENT]) {
      await b.waitFor(`the watchdog to restart ${unit}`, async () => {
        const s = await unitState(b, unit);
        return s.activeState === 'active' && s.nRestarts === restartsBefore.get(unit)! + 1;
      }, 30_000);
      const journal = (await b.exec(['journalctl', '-u', unit, '--no-pager', '-o', 'cat'])).stdout;
      assert.match(journal, /Watchdog timeout \(limit 3s\)!/);
      assert.match(journal, /TEST HOOK: the event loop will be blocked on purpose/);
    }
    await sh(`rm -f /run/systemd/system/${SERVER}.d/60-test-hang.conf /run/systemd/system/${AGENT}.d/60-test-hang.conf`);
    await b.exec(['systemctl', 'daemon-reload']);
    await b.waitFor('node Ready after the watchdog restarts', async () => (await readyCondition(b, kubeconfig, NODE))?.status === 'True', 30_000);
    await assertPodUntouched();
    lap('watchdog restarts seen');
  });

  await step('journalctl -u nodelet-agent -o cat shows structured JSON log lines', {}, async () => {
    const out = (await b.exec(['journalctl', '-u', AGENT, '--no-pager', '-o', 'cat'])).stdout;
    const json = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { level?: number; time?: number; component?: string; msg?: string });
    assert.ok(json.length > 0, out);
    for (const l of json) assert.ok(typeof l.level === 'number' && typeof l.time === 'number' && typeof l.msg === 'string', JSON.stringify(l));
    assert.ok(json.some((l) => l.msg === 'Agent started' && l.component === 'agent'));
    assert.ok(json.some((l) => l.msg === 'Node registered'));
  });

  await step('uninstall --purge: units inactive, no file of nodelet left behind', {}, async () => {
    if (containerId) {
      // Drain like an operator: the pod's network teardown needs the agent.
      const del = await kubectlIn(b, kubeconfig, ['delete', 'pod', 'survivor', '--wait=true', '--timeout=20s']);
      assert.equal(del.code, 0, del.stderr);
    }
    await nodeletIn(b, ['uninstall', '--purge']);
    for (const u of [SERVER, AGENT]) {
      assert.equal((await b.exec(['systemctl', 'is-active', u], { allowFail: true })).stdout.trim(), 'inactive', u);
    }
    const after = await listInstallDirs(b);
    const left = [...after].filter((p) => !before.has(p) && !CONTAINERD_OWN.has(p));
    assert.deepEqual(left, [], `files left behind after uninstall --purge:\n${left.join('\n')}`);
    lap('uninstalled');
  });
});
