/**
 * Child cancellation linked to a long-lived parent signal.
 *
 * Why not `AbortSignal.any([parent, ...])`: on Node 20–22 each combined signal can stay attached
 * to the long-lived parent (nodejs/node#55351, #54614), so a per-sync `any()` leaks listeners.
 * `linkAbort` adds one listener and `dispose()` removes it, like VS Code's
 * `CancellationTokenSource(parent)`.
 */
export interface AbortLink {
  readonly controller: AbortController;
  readonly signal: AbortSignal;
  /** Unhooks from the parent. Idempotent. Does not abort the child. */
  dispose(): void;
}

export function linkAbort(parent?: AbortSignal, timeoutMs?: number): AbortLink {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onAbort = (): void => controller.abort(parent?.reason);
  if (parent) {
    if (parent.aborted) controller.abort(parent.reason);
    else parent.addEventListener('abort', onAbort, { once: true });
  }
  if (timeoutMs !== undefined && !controller.signal.aborted) {
    timer = setTimeout(() => {
      controller.abort(new DOMException(`the operation timed out after ${timeoutMs} ms`, 'TimeoutError'));
    }, timeoutMs);
    timer.unref?.();
  }
  let disposed = false;
  return {
    controller,
    signal: controller.signal,
    dispose() {
      if (disposed) return;
      disposed = true;
      parent?.removeEventListener('abort', onAbort);
      if (timer) clearTimeout(timer);
    },
  };
}

/** Resolves after `ms`, or rejects with the signal's AbortError. Never leaves a timer behind. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal?.reason instanceof Error ? signal.reason : new DOMException('aborted', 'AbortError'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
