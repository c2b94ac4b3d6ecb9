// Logger interface the services depend on (pino satisfies it); tests may pass silentLogger.

export interface Logger {
  trace(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

const noop = (): void => {};
export const silentLogger: Logger = {
  trace: noop, debug: noop, info: noop, warn: noop, error: noop,
  child: () => silentLogger,
};
