import { writeFileSync } from 'node:fs';
import { startTestRuntime } from '@nodelet/lab-runtime/testing';
const rt = await startTestRuntime({ name: 'nla-manual', bridge: { name: 'nla8', subnet: '10.231.8.0/24' } });
writeFileSync('/tmp/nla-scratch/rt.json', JSON.stringify({ endpoint: rt.endpoint, images: rt.images, dir: rt.dir }));
const done = async () => { await rt.stop(); process.exit(0); };
process.on('SIGTERM', done); process.on('SIGINT', done);
setInterval(() => {}, 1 << 30);
