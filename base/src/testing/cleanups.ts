/** The part of node:test's TestContext that {@link cleanups} needs (a test or a subtest). */
export interface AfterHookHost {
  after(fn: () => Promise<void>): void;
}

/** Adds one cleanup callback to the stack made by {@link cleanups}. */
export type Cleanup = (fn: () => unknown) => void;

/**
 * A last-in first-out cleanup stack for one test. node:test runs `t.after` hooks first in, first
 * out, so `t.after(() => rm(dir))` registered before `t.after(() => server.close())` deletes the dir
 * while the server still uses it (and it may write files there again on shutdown). Callbacks given
 * to the returned function run in reverse order of registration, each awaited, from one `t.after`
 * registered on first use; every callback runs even when an earlier one throws, then the first
 * error is rethrown (an AggregateError when several failed). Calls with the same context share one
 * stack, so a fixture helper and the test body that called it clean up in one reverse order.
 */
export function cleanups(t: AfterHookHost): Cleanup {
  let cleanup = stacks.get(t);
  if (!cleanup) {
    const stack: (() => unknown)[] = [];
    cleanup = (fn) => {
      if (stack.length === 0) t.after(() => runStack(stack));
      stack.push(fn);
    };
    stacks.set(t, cleanup);
  }
  return cleanup;
}

const stacks = new WeakMap<AfterHookHost, Cleanup>();

async function runStack(stack: (() => unknown)[]): Promise<void> {
  const errors: unknown[] = [];
  while (stack.length > 0) {
    const fn = stack.pop()!;
    try {
      await fn();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} test cleanups failed`);
}
