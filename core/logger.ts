/** The logging surface core and the servers use; pino satisfies it (created only in main.ts). */
export interface Logger {
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

export const silentLogger: Logger = {
  info() {},
  warn() {},
  error() {},
  debug() {},
  child() {
    return silentLogger;
  },
};

/** The processes write their log lines in blocks of this many bytes (core/log-output.ts)… */
export const LOG_BLOCK_BYTES = 4096;
/** …and at the latest this long after a line is made. */
export const LOG_FLUSH_MS = 100;
