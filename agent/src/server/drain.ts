/** Waiting for a slow reader without waiting forever. */
import type { Writable } from 'node:stream';

/**
 * Resolves once `stream` emits 'drain', or closes, or `signal` aborts — a client that stops
 * reading and then goes away must not leave the writer parked on a 'drain' that never comes.
 */
export function waitForDrain(stream: Writable, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted || stream.destroyed || !stream.writableNeedDrain) {
      resolve();
      return;
    }
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}
