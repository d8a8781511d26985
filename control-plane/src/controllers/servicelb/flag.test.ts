// `nodelet server --service-lb-pool`: a bad pool is a usage error (exit 2, the reason on stderr)
// before anything starts; the flag is in the usage text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../main.js';

async function run(args: string[]): Promise<{ code: number | string | undefined; stderr: string; stdout: string }> {
  const err: string[] = [];
  const out: string[] = [];
  const origErr = process.stderr.write.bind(process.stderr);
  const origOut = process.stdout.write.bind(process.stdout);
  const before = process.exitCode;
  process.stderr.write = ((s: string) => (err.push(String(s)), true)) as typeof process.stderr.write;
  process.stdout.write = ((s: string) => (out.push(String(s)), true)) as typeof process.stdout.write;
  try {
    await main(args);
    return { code: process.exitCode, stderr: err.join(''), stdout: out.join('') };
  } finally {
    process.stderr.write = origErr;
    process.stdout.write = origOut;
    process.exitCode = before;
  }
}

test('--service-lb-pool refuses what is not an IPv4 network and is documented in --help', async () => {
  const hostBits = await run(['--service-lb-pool', '192.168.1.241/28']);
  assert.equal(hostBits.code, 2);
  assert.match(hostBits.stderr, /^--service-lb-pool must be an IPv4 CIDR like 192\.168\.1\.240\/28: "192\.168\.1\.241\/28" has host bits set; give the network address \(192\.168\.1\.240\/28\)\n$/);
  const junk = await run(['--service-lb-pool', 'pool']);
  assert.equal(junk.code, 2);
  assert.match(junk.stderr, /"pool" is not an IPv4 CIDR/);
  assert.match((await run(['--help'])).stdout, /--service-lb-pool <cidr>/);
});
