import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseResolvConf, readHostResolvConf } from './resolv-conf.js';
import { UpstreamSource } from './upstreams.js';

describe('resolv.conf', () => {
  it("parses with the kubelet's rules: nameservers accumulate, the last search and options lines win, # comments", () => {
    const text = ['# generated', 'nameserver 192.0.2.1', 'search a.example b.example.', 'options ndots:2', 'nameserver 192.0.2.2', '  # indented comment', 'search c.example. d.example', 'options timeout:1 rotate', 'nameserver', 'domain ignored.example', ''].join('\n');
    assert.deepEqual(parseResolvConf(text), { nameservers: ['192.0.2.1', '192.0.2.2'], searches: ['c.example', 'd.example'], options: ['timeout:1', 'rotate'] });
  });

  it("reads systemd-resolved's real upstreams when the file names its stub, else the file itself", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-resolv-'));
    try {
      const stub = join(dir, 'stub.conf');
      const real = join(dir, 'real.conf');
      await writeFile(stub, 'nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n');
      await writeFile(real, 'nameserver 192.0.2.53\nsearch lan\n');
      assert.deepEqual(await readHostResolvConf(stub, { upstreamConf: real }), { nameservers: ['192.0.2.53'], searches: ['lan'], options: [], path: real });
      assert.equal((await readHostResolvConf(stub, { upstreamConf: join(dir, 'absent') })).path, stub, 'without the systemd file the stub file stays');
      assert.deepEqual((await readHostResolvConf(real)).nameservers, ['192.0.2.53']);
      await assert.rejects(readHostResolvConf(join(dir, 'absent')), (e: { code?: string }) => e.code === 'ERR_FAILED_PRECONDITION');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('upstreams leave out the resolver itself and re-read the file after refreshMs; a failed read keeps the last list', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'nodelet-resolv-'));
    try {
      const conf = join(dir, 'resolv.conf');
      await writeFile(conf, 'nameserver 10.96.0.10\nnameserver 192.0.2.53\nnameserver fe80::1%eth0\nnameserver 2001:db8::53\n');
      let now = 0;
      const src = new UpstreamSource({ resolvConf: conf, self: ['192.0.2.2', '10.96.0.10'], refreshMs: 1000, now: () => now });
      await src.refresh();
      assert.deepEqual(src.list(), [{ ip: '192.0.2.53', port: 53 }, { ip: 'fe80::1%eth0', port: 53 }, { ip: '2001:db8::53', port: 53 }]);
      await writeFile(conf, 'nameserver 192.0.2.54\n');
      assert.deepEqual(src.list().map((u) => u.ip), ['192.0.2.53', 'fe80::1%eth0', '2001:db8::53'], 'not re-read before refreshMs');
      now = 1000;
      src.list();
      await src.refresh();
      assert.deepEqual(src.list().map((u) => u.ip), ['192.0.2.54']);
      await rm(conf);
      now = 2000;
      await src.refresh();
      assert.deepEqual(src.list().map((u) => u.ip), ['192.0.2.54']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
