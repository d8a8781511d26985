// Writes the default units into systemd/units/ (run: node --conditions=source --import tsx systemd/scripts/render.ts).
import { writeFileSync, mkdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serverUnit, agentUnit, containerdDropIn } from '../src/units.js';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'units');
mkdirSync(join(dir, 'containerd.service.d'), { recursive: true });
writeFileSync(join(dir, 'nodelet-server.service'), serverUnit());
writeFileSync(join(dir, 'nodelet-agent.service'), agentUnit());
writeFileSync(join(dir, 'containerd.service.d', '10-nodelet.conf'), containerdDropIn());
