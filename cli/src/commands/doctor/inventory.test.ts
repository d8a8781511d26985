// The node inventory: the text form, and that systeminformation stays out of everything the agent
// can load (the agent's packages never name it; the cli only imports it dynamically).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectInventory, formatInventory } from './inventory.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

test('the agent and every package it may import never name systeminformation', async () => {
  // The layer table is the one list of what the agent may import (eslint.config.js).
  const { LAYERS } = (await import(new URL('eslint.config.js', `file://${ROOT}`).href)) as { LAYERS: Record<string, string[]> };
  const pkgs = ['agent', ...LAYERS['agent']!];
  for (const pkg of pkgs) {
    for (const f of tsFiles(join(ROOT, pkg, 'src'))) assert.ok(!readFileSync(f, 'utf8').includes('systeminformation'), `${f} names systeminformation`);
  }
  const agentPkg = JSON.parse(readFileSync(join(ROOT, 'agent', 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  assert.ok(!('systeminformation' in (agentPkg.dependencies ?? {})));
});

test('the cli imports systeminformation only dynamically, in inventory.ts', () => {
  for (const f of tsFiles(join(ROOT, 'cli', 'src'))) {
    const text = readFileSync(f, 'utf8');
    assert.ok(!/^\s*import[^(]*['"]systeminformation['"]/m.test(text), `${f} imports systeminformation statically`);
    if (/import\(\s*['"]systeminformation['"]\s*\)/.test(text)) assert.ok(f.endsWith(join('doctor', 'inventory.ts')), f);
  }
});

test('inventory: what systeminformation reports, with pseudo filesystems left out, as text', async () => {
  const inv = await collectInventory(async () => ({
    osInfo: async () => ({ platform: 'linux', distro: 'Debian GNU/Linux', release: '12', kernel: '6.1.0', arch: 'x64', hostname: 'n1' }),
    cpu: async () => ({ manufacturer: 'AMD', brand: 'EPYC', cores: 2, physicalCores: 1, speed: 2.5, virtualization: false }),
    mem: async () => ({ total: 8e9, available: 6e9, swaptotal: 0 }),
    fsSize: async () => [
      { fs: '/dev/vda1', type: 'ext4', size: 1e11, used: 4e10, available: 6e10, mount: '/' },
      { fs: 'tmpfs', type: 'tmpfs', size: 1e9, used: 0, available: 1e9, mount: '/run' },
    ],
    networkInterfaces: async () => [{ iface: 'eth0', ip4: '192.0.2.10', ip6: '', mac: '52:54:00:12:34:56', operstate: 'up', virtual: false }],
    system: async () => ({ manufacturer: 'QEMU', model: 'Standard PC', virtual: true, virtualHost: 'KVM' }),
  }));
  assert.deepEqual(inv.disks.map((d) => d.mount), ['/']);
  assert.equal(
    formatInventory(inv),
    [
      'os:       Debian GNU/Linux 12 (linux/x64, kernel 6.1.0), host n1',
      'cpu:      AMD EPYC, 2 logical / 1 physical cores at 2.5 GHz',
      'memory:   8GB total, 6GB available, swap off',
      'virtual:  yes (KVM); QEMU Standard PC',
      'disk:     / ext4 100GB, 60GB free (/dev/vda1)',
      'network:  eth0 up 192.0.2.10 52:54:00:12:34:56',
    ].join('\n'),
  );
});
