// A node:test reporter that records every skipped or todo test as one JSON line, so that
// scripts/run-tests.mjs can refuse a CI run in which a test did not run (docs/contributing.md,
// "Tests"): node's runner itself exits 0 with `# skipped N`, which would let a missing tool pass.
export default async function* skipsReporter(source) {
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { name, file, skip, todo } = event.data;
    if (skip === undefined && todo === undefined) continue;
    // Left out by --test-name-pattern on the command line: chosen, not missed.
    if (skip === 'test name does not match pattern') continue;
    yield `${JSON.stringify({ name, file, reason: typeof skip === 'string' ? skip : typeof todo === 'string' ? todo : skip ? 'skipped' : 'todo' })}\n`;
  }
}
