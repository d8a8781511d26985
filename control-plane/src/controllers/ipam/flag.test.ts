// `nodelet server --cluster-cidr`: the pod network is IPv4 only, so an IPv6 range is a usage error
// (exit 2, the flag named on stderr) before anything starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../main.js';

async function run(args: string[]): Promise<{ code: number | string | undefined; stderr: string }> {
  const err: string[] = [];
  const origErr = process.stderr.write.bind(process.stderr);
  const before = process.exitCode;
  process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write;
  try {
    await main(args);
    return { code: process.exitCode, stderr: err.join('') };
  } finally {
    process.stderr.write = origErr;
    process.exitCode = before;
  }
}

test('--cluster-cidr refuses an IPv6 range, naming the flag', async () => {
  const v6 = await run(['--cluster-cidr', 'fd00:10:244::/56']);
  assert.equal(v6.code, 2);
  assert.equal(v6.stderr, '--cluster-cidr must be an IPv4 CIDR like 10.244.0.0/16 (IPv6 pod networks are not supported), got "fd00:10:244::/56"\n');
  assert.equal((await run(['--cluster-cidr', 'pods'])).code, 2);
});
