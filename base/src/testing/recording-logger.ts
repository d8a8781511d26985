/** A Logger that keeps every entry, for tests that assert what was logged and at which level. */
import type { Logger } from '../logger.js';

export interface LogEntry {
  level: 'error' | 'warn' | 'info' | 'debug';
  msg: string;
  fields: Record<string, unknown>;
}

export class RecordingLogger implements Logger {
  readonly entries: LogEntry[];
  readonly #bindings: Record<string, unknown>;

  constructor(entries: LogEntry[] = [], bindings: Record<string, unknown> = {}) {
    this.entries = entries;
    this.#bindings = bindings;
  }

  error(obj: object, msg: string): void {
    this.entries.push({ level: 'error', msg, fields: { ...this.#bindings, ...obj } });
  }

  warn(obj: object, msg: string): void {
    this.entries.push({ level: 'warn', msg, fields: { ...this.#bindings, ...obj } });
  }

  info(obj: object, msg: string): void {
    this.entries.push({ level: 'info', msg, fields: { ...this.#bindings, ...obj } });
  }

  debug(obj: object, msg: string): void {
    this.entries.push({ level: 'debug', msg, fields: { ...this.#bindings, ...obj } });
  }

  child(bindings: Record<string, unknown>): Logger {
    return new RecordingLogger(this.entries, { ...this.#bindings, ...bindings });
  }

  /** Entries whose message matches. */
  find(msg: RegExp, level?: LogEntry['level']): LogEntry[] {
    return this.entries.filter((e) => msg.test(e.msg) && (!level || e.level === level));
  }
}
