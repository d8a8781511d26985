/** Something that owns a resource and releases it. `dispose()` must be idempotent. */
export interface Disposable {
  dispose(): void;
}

export function toDisposable(fn: () => void): Disposable {
  let done = false;
  return {
    dispose() {
      if (done) return;
      done = true;
      fn();
    },
  };
}

/**
 * Owns a set of disposables and releases them in reverse order of addition, like VS Code's
 * DisposableStore. Adding to a disposed store disposes the item at once (no leak after close).
 */
export class DisposableStore implements Disposable {
  readonly #items: Disposable[] = [];
  #disposed = false;

  get isDisposed(): boolean {
    return this.#disposed;
  }

  add<T extends Disposable>(item: T): T {
    if (this.#disposed) item.dispose();
    else this.#items.push(item);
    return item;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    const errors: unknown[] = [];
    for (const item of this.#items.splice(0).reverse()) {
      try {
        item.dispose();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'several disposables failed');
  }
}
