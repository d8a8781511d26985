// Runs inside the nspawn container (test/systemd/logind-shutdown.itest.ts): the agent's logind
// module (@nodelet/systemd, built) against the container's real systemd-logind. Appends one line
// per step to argv[2]; on PrepareForShutdown(true) it holds the lock argv[3] ms more, then releases.
import { appendFileSync } from 'node:fs';
import { logindInhibitor } from '/opt/nodelet/systemd/dist/index.js';

const [out, holdMs, wantDelayMs] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const note = (line) => appendFileSync(out, `${line} ${Date.now()}\n`);
const log = { error: console.error, warn: console.error, info() {}, debug() {}, child: () => log };
const inhibitor = logindInhibitor({ log });
const signal = new AbortController().signal;

note(`delay-before ${await inhibitor.inhibitDelayMaxMs(signal)}`);
await inhibitor.raiseInhibitDelay(wantDelayMs, signal);
for (let i = 0; i < 50 && (await inhibitor.inhibitDelayMaxMs(signal)) < wantDelayMs; i++) await new Promise((r) => setTimeout(r, 100));
note(`delay-after ${await inhibitor.inhibitDelayMaxMs(signal)}`);
const lock = await inhibitor.inhibit(signal);
await inhibitor.watchShutdown((active) => {
  note(`prepare-for-shutdown ${active}`);
  if (active) setTimeout(() => void lock.release().then(() => note('released')), holdMs);
}, signal);
note('armed');
