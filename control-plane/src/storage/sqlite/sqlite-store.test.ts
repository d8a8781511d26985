// The storage conformance suite on SQLite, as a fast unit test (temp files, no daemons).
// The integration run (control-plane/test/integration/storage-sqlite.itest.ts) adds kill -9.
import { runStoreConformance } from '../testing/conformance.js';
import { createTempSqliteStore } from '../testing/sqlite.js';

runStoreConformance('sqlite', async () => createTempSqliteStore());
