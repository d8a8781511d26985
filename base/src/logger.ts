/**
 * The minimal logger interface libraries accept. pino's Logger satisfies it; only `main.ts`
 * files create a real pino logger. Messages are constant and capitalised; data goes in `obj`.
 */
export interface Logger {
  error(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  trace?(obj: object, msg: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** A logger that drops everything: the default for libraries and tests. */
export const noopLogger: Logger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  trace() {},
  child() {
    return noopLogger;
  },
};
