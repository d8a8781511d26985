import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { readMachineInfo } from './machine-info.js';

test('machine facts come from the files cAdvisor reads: machine-id (first that exists), DMI product UUID lower-cased, boot id, PRETTY_NAME', async (t) => {
  const dir = await mkdtemp(join(os.tmpdir(), 'machine-info-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const f = (name: string, text: string) => writeFile(join(dir, name), text);
  await f('dbus-machine-id', '0123abcd\n');
  await f('product_uuid', 'ABCDEF01-2345-6789-ABCD-EF0123456789\n');
  await f('boot_id', 'b00t\n');
  await f('os-release', 'NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nID=debian\n');
  const m = await readMachineInfo(dir, {
    machineId: [join(dir, 'missing-machine-id'), join(dir, 'dbus-machine-id')],
    productUuid: join(dir, 'product_uuid'),
    bootId: join(dir, 'boot_id'),
    osRelease: join(dir, 'os-release'),
  });
  assert.equal(m.machineID, '0123abcd');
  assert.equal(m.systemUUID, 'abcdef01-2345-6789-abcd-ef0123456789');
  assert.equal(m.bootID, 'b00t');
  assert.equal(m.osImage, 'Debian GNU/Linux 12 (bookworm)');
  assert.equal(m.cpuCores, os.cpus().length);
  assert.equal(m.memoryBytes, os.totalmem());
  assert.equal(m.kernelVersion, os.release());
  assert.equal(m.hostname, os.hostname().toLowerCase());
  assert.ok(m.ephemeralStorageBytes > 0);
});

test('machine facts: missing files leave the identity empty and the OS image "Linux" rather than failing', async () => {
  const none = join(os.tmpdir(), 'machine-info-none', 'x');
  const m = await readMachineInfo('/', { machineId: [none], productUuid: none, bootId: none, osRelease: none });
  assert.deepEqual([m.machineID, m.systemUUID, m.bootID, m.osImage], ['', '', '', 'Linux']);
});
