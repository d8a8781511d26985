import { labDown } from '@nodelet/cli';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
const stateDir = process.argv[2]!;
const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((l) => l.split(' ')[4] ?? '').filter((m) => m.startsWith(`${stateDir}/`));
for (const m of mounts.reverse()) execFileSync('umount', ['-l', m]);
console.log(await labDown({ stateDir, bridge: 'nlb-strm' }));
