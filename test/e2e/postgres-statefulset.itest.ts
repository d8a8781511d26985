// nodelet-test: long — builds a 387 MB image the first time (about a minute) before its lab.
// A database on the lab, as docs/images.md shows it: postgres built from Debian packages
// (`nodelet image build postgres --debian postgresql`, built once into build/debian-images and
// reused, as `make debian-images` keeps what it built), a StatefulSet with a volumeClaimTemplate on
// the lab's local-path provisioner, `kubectl exec … psql` creates a table and a row, the pod is
// deleted, and its replacement on the same claim sees the row. The image runs as the package's
// system user (postgres refuses root); the layer's owners are checked first (the postinst's chowns,
// the packages' setuid files).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createReadStream, cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { Parser } from 'tar';
import { labDown, labUp } from '@nodelet/cli';
import { requireRoot } from '@nodelet/lab-runtime/testing';
import { blobPath, DEFAULT_LAB_IMAGE_DIR, ensureLabImages, inspectImage, listImages } from '@nodelet/oci';
import { kubectl } from './helpers.js';
import { freePort } from '@nodelet/base/testing';
import { pollUntil } from '@nodelet/base';

const NODELET = fileURLToPath(new URL('../../bin/nodelet-dev', import.meta.url));
/** The postgres image, built once and kept (delete the directory to rebuild it). */
const CACHE_STORE = fileURLToPath(new URL('../../build/debian-images', import.meta.url));

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: 540_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The uid:gid and octal mode of every entry of the image's one layer. */
async function layerOwners(store: string): Promise<Map<string, string>> {
  const img = await inspectImage(store, { name: 'postgres', tag: 'latest' });
  const layers = (img.manifest as { layers: { digest: string }[] }).layers;
  assert.equal(layers.length, 1);
  const owners = new Map<string, string>();
  await pipeline(createReadStream(blobPath(store, layers[0]!.digest)), new Parser({
    onReadEntry: (e) => {
      owners.set(e.path.replace(/\/$/, ''), `${e.uid}:${e.gid} ${(e.mode ?? 0).toString(8)}`);
      e.resume();
    },
  }));
  return owners;
}

const STATEFULSET = `
apiVersion: apps/v1
kind: StatefulSet
metadata: { name: db }
spec:
  serviceName: db
  replicas: 1
  selector: { matchLabels: { app: db } }
  template:
    metadata: { labels: { app: db } }
    spec:
      securityContext: { fsGroup: 102, fsGroupChangePolicy: OnRootMismatch }
      containers:
        - name: postgres
          image: postgres
          imagePullPolicy: IfNotPresent
          env: [{ name: POSTGRES_PASSWORD, value: example }]
          ports: [{ containerPort: 5432 }]
          volumeMounts: [{ name: data, mountPath: /var/lib/postgresql/data }]
  volumeClaimTemplates:
    - metadata: { name: data }
      spec: { accessModes: [ReadWriteOnce], resources: { requests: { storage: 256Mi } } }
`;

test('postgres from Debian packages in a StatefulSet on a local-path volume keeps its rows across a pod delete, running as postgres', { timeout: 1_200_000 }, async (t) => {
  if (!requireRoot(t)) return;
  if (spawnSync('nft', ['--version']).status !== 0) return t.skip('nft not installed (Debian nftables)');
  if (!(await listImages(CACHE_STORE).catch(() => [])).some((i) => i.name === 'postgres' && i.tag === 'latest')) {
    const built = await run(NODELET, ['image', 'build', 'postgres', '--debian', 'postgresql', '--store', CACHE_STORE]);
    assert.equal(built.code, 0, built.stderr);
    assert.match(built.stdout, /^postgres:latest sha256:[0-9a-f]{64} \(\d+ Debian packages\)\n$/);
  }
  const owners = await layerOwners(CACHE_STORE);
  assert.equal(owners.get('var/lib/postgresql/data'), '102:102 700');
  assert.equal(owners.get('run/postgresql'), '102:102 2775');
  assert.equal(owners.get('var/log/postgresql'), '0:102 1775');
  assert.equal(owners.get('usr/bin/passwd'), '0:0 4755');

  const stateDir = mkdtempSync(join(tmpdir(), 'nodelet-e2e-postgres-'));
  const labs = await ensureLabImages(DEFAULT_LAB_IMAGE_DIR);
  const imagesDir = join(stateDir, 'images');
  cpSync(labs.dir, imagesDir, { recursive: true });
  const [apiPort, regPort, nodePort, healthzPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const lab = { stateDir, apiPort, registry: `127.0.0.1:${regPort}`, clusterCidr: '10.247.0.0/16', bridge: 'nle-pg', nodeName: 'e2e-pg', nodeApiPort: nodePort, healthzPort, imagesDir };
  t.after(async () => {
    await labDown(lab);
    rmSync(stateDir, { recursive: true, force: true });
  });
  // Into this lab's store only: export from the cache, import here.
  const archive = join(stateDir, 'postgres.tar');
  const exported = await run(NODELET, ['image', 'export', '--store', CACHE_STORE, '-o', archive, 'postgres:latest']);
  assert.equal(exported.code, 0, exported.stderr);
  const imported = await run(NODELET, ['image', 'import', '--store', imagesDir, archive]);
  assert.equal(imported.code, 0, imported.stderr);
  rmSync(archive);

  const up = await labUp(lab);
  const k = kubectl(up.kubeconfig);
  const manifest = join(stateDir, 'db.yaml');
  writeFileSync(manifest, STATEFULSET);
  await k('apply', '-f', manifest);
  const ready = async (): Promise<void> => {
    await pollUntil('db-0 Ready', async () =>
      (await k('get', 'pod', 'db-0', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}').catch(() => '')).trim() === 'True' || undefined, { timeoutMs: 300_000, intervalMs: 1_000 });
  };
  await ready();
  assert.match(await k('get', 'pvc', 'data-db-0', '--no-headers'), /^data-db-0\s+Bound\s+pvc-\S+\s+256Mi\s+RWO\s+local-path\s/);

  // postgres accepts connections once initdb ran and the server started.
  const psql = (sql: string) => k.try('exec', 'db-0', '--', 'psql', '-v', 'ON_ERROR_STOP=1', '-tAc', sql);
  await pollUntil('postgres answers', async () => (await psql('select 1')).stdout.trim() === '1' || undefined, { timeoutMs: 120_000, intervalMs: 1_000 });
  const uid = await k('exec', 'db-0', '--', 'sh', '-c', 'while read k v rest; do case $k in Uid:) echo "$v" ;; esac; done < /proc/1/status');
  assert.equal(uid.trim(), '102', 'postgres (PID 1) runs as the postgres user');
  // Over TCP the password initdb was given is needed.
  const tcp = (pw: string) => k.try('exec', 'db-0', '--', 'psql', `postgresql://postgres:${pw}@127.0.0.1:5432/postgres`, '-tAc', 'select 42');
  assert.equal((await tcp('example')).stdout.trim(), '42');
  assert.match((await tcp('wrong')).stderr, /password authentication failed for user "postgres"/);
  const created = await psql("create table notes (body text); insert into notes values ('kept across pods')");
  assert.equal(created.code, 0, created.stderr);

  const oldUid = (await k('get', 'pod', 'db-0', '-o', 'jsonpath={.metadata.uid}')).trim();
  await k('delete', 'pod', 'db-0', '--wait=true');
  await pollUntil('a new db-0', async () => {
    const u = (await k('get', 'pod', 'db-0', '-o', 'jsonpath={.metadata.uid}').catch(() => '')).trim();
    return (u && u !== oldUid) || undefined;
  }, { timeoutMs: 120_000, intervalMs: 1_000 });
  await ready();
  const rows = await pollUntil('the row in the new pod', async () => {
    const r = await psql('select body from notes');
    return r.code === 0 ? r.stdout : undefined;
  }, { timeoutMs: 120_000, intervalMs: 1_000 });
  assert.equal(rows.trim(), 'kept across pods');
});
