// Child process for the kill -9 durability test: creates keys one at a time and prints
// `ack <key> <revision>` only after each create resolved (= committed durably). The parent kills
// it with SIGKILL mid-stream and checks that every acknowledged key survived.
//
//   node --conditions=source --import tsx durability-writer.ts <db-path> <max-keys>
import { writeSync } from 'node:fs';
import { createSqliteStore } from '../sqlite/sqlite-store.js';

const [path, max = '100000'] = process.argv.slice(2);
if (!path) {
  process.stderr.write('usage: durability-writer.ts <db-path> [max-keys]\n');
  process.exit(2);
}
const store = createSqliteStore({ path });
writeSync(1, 'ready\n');
for (let i = 0; i < Number(max); i++) {
  const key = `/registry/configmaps/durability/k${i}`;
  const rev = await store.create(key, Buffer.from(JSON.stringify({ i })));
  // Synchronous write: the line is in the pipe before the next create starts.
  writeSync(1, `ack ${key} ${rev}\n`);
}
await store.close();
