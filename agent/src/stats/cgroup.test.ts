import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cgroupDirs, parseMountinfo, parseProcCgroup, readCgroup, readProcessCgroup, readText, workingSet, type ReadText } from './cgroup.js';

// The lab VM's layout: v1 controllers, each on its own mount, plus an empty unified hierarchy.
const HYBRID_MOUNTINFO = [
  '25 30 0:23 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '26 25 0:24 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '27 25 0:25 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct',
  '28 25 0:26 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '29 25 0:27 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd',
  '30 25 0:28 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n');

const HYBRID_PROC = ['9:name=systemd:/k8s.io/abc', '4:memory:/k8s.io/abc', '2:cpuacct:/k8s.io/abc', '1:cpu:/k8s.io/abc', '0::/k8s.io/abc'].join('\n');

// A systemd-era host: cgroup v2 only.
const V2_MOUNTINFO = '35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot';
const V2_PROC = '0::/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc.scope';

function files(map: Record<string, string>): ReadText {
  return async (p) => {
    const v = map[p];
    if (v === undefined) throw Object.assign(new Error(`ENOENT: ${p}`), { code: 'ENOENT' });
    return v;
  };
}

describe('cgroup layout', () => {
  it('finds v1 controllers (also co-mounted ones) and the unified hierarchy in mountinfo', () => {
    const m = parseMountinfo(HYBRID_MOUNTINFO);
    assert.equal(m.v1.get('cpuacct')?.mount, '/sys/fs/cgroup/cpuacct');
    assert.equal(m.v1.get('memory')?.mount, '/sys/fs/cgroup/memory');
    assert.equal(m.v2?.mount, '/sys/fs/cgroup/unified');
    const co = parseMountinfo('26 25 0:24 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct');
    assert.equal(co.v1.get('cpuacct')?.mount, '/sys/fs/cgroup/cpu,cpuacct');
  });

  it('reads v1 controllers on a hybrid host even though the unified hierarchy is mounted', () => {
    const dirs = cgroupDirs(parseMountinfo(HYBRID_MOUNTINFO), parseProcCgroup(HYBRID_PROC));
    assert.deepEqual(dirs, { cpu: { version: 1, dir: '/sys/fs/cgroup/cpuacct/k8s.io/abc' }, memory: { version: 1, dir: '/sys/fs/cgroup/memory/k8s.io/abc' } });
  });

  it('reads the unified hierarchy on a v2 host', () => {
    const dirs = cgroupDirs(parseMountinfo(V2_MOUNTINFO), parseProcCgroup(V2_PROC));
    const dir = '/sys/fs/cgroup/kubepods.slice/kubepods-pod1.slice/cri-containerd-abc.scope';
    assert.deepEqual(dirs, { cpu: { version: 2, dir }, memory: { version: 2, dir } });
  });

  it('resolves paths below the root of a mount (a cgroup namespace)', () => {
    const m = parseMountinfo('26 25 0:24 /k8s.io /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory');
    assert.equal(cgroupDirs(m, parseProcCgroup('4:memory:/k8s.io/abc')).memory?.dir, '/sys/fs/cgroup/memory/abc');
  });
});

describe('cgroup readings', () => {
  it('v1: cpuacct.usage in ns, working set = usage - total_inactive_file', async () => {
    const read = files({
      '/cg/cpu/cpuacct.usage': '1500000000\n',
      '/cg/mem/memory.usage_in_bytes': '10485760\n',
      '/cg/mem/memory.stat': 'cache 4096\ninactive_file 8192\ntotal_inactive_file 2097152\ntotal_rss 6291456\npgfault 120\npgmajfault 3\n',
    });
    const r = await readCgroup({ cpu: { version: 1, dir: '/cg/cpu' }, memory: { version: 1, dir: '/cg/mem' } }, read);
    assert.deepEqual(r, { cpuUsageNs: 1_500_000_000, memory: { usageBytes: 10485760, workingSetBytes: 8388608, rssBytes: 6291456, pageFaults: 120, majorPageFaults: 3 } });
  });

  it('v2: cpu.stat usage_usec, memory.current, inactive_file and anon', async () => {
    const read = files({
      '/cg/cpu.stat': 'usage_usec 2500\nuser_usec 2000\nsystem_usec 500\n',
      '/cg/memory.current': '4096000\n',
      '/cg/memory.stat': 'anon 1000000\nfile 3000000\ninactive_file 5000000\npgfault 7\npgmajfault 0\n',
    });
    const r = await readCgroup({ cpu: { version: 2, dir: '/cg' }, memory: { version: 2, dir: '/cg' } }, read);
    // Inactive file pages larger than usage: the working set floors at 0, never negative.
    assert.deepEqual(r, { cpuUsageNs: 2_500_000, memory: { usageBytes: 4096000, workingSetBytes: 0, rssBytes: 1000000, pageFaults: 7, majorPageFaults: 0 } });
  });

  it('a process that is gone reads as nothing; a missing file leaves its part out', async () => {
    assert.deepEqual(await readProcessCgroup(42, parseMountinfo(HYBRID_MOUNTINFO), files({})), {});
    const read = files({ '/proc/42/cgroup': HYBRID_PROC, '/sys/fs/cgroup/cpuacct/k8s.io/abc/cpuacct.usage': '77\n' });
    assert.deepEqual(await readProcessCgroup(42, parseMountinfo(HYBRID_MOUNTINFO), read), { cpuUsageNs: 77 });
  });

  it('working set', () => {
    assert.equal(workingSet(100, 30), 70);
    assert.equal(workingSet(100, undefined), 100);
    assert.equal(workingSet(10, 30), 0);
  });
});

describe('readText (the real reader of /proc and cgroupfs)', () => {
  it('reads a procfs file whole although stat gives it size 0, and fails a missing one with a rejected promise, not a throw', async () => {
    const status = await readText('/proc/self/status');
    assert.match(status, /^Name:/);
    assert.match(status, /\nVmRSS:\s+\d+ kB\n/);
    assert.ok(status.endsWith('\n'));
    // Callers chain .catch() on the call: a synchronous throw would escape it.
    let p: Promise<string> | undefined;
    assert.doesNotThrow(() => (p = readText('/proc/self/no-such-file')));
    await assert.rejects(p!, { code: 'ENOENT' });
  });
});
