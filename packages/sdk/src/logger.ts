import { pino } from 'pino';

/** What the SDK logs through: pino's calling convention (context object, then message). */
export interface Logger {
  debug(context: object, message: string): void;
  info(context: object, message: string): void;
  warn(context: object, message: string): void;
  error(context: object, message: string): void;
}

/**
 * JSON lines on stdout, at OJS_LOG_LEVEL (default info), written
 * synchronously: a worker logs little, and its last lines before exit must
 * not be lost.
 */
export function defaultLogger(name: string): Logger {
  return pino(
    { name, level: process.env['OJS_LOG_LEVEL'] ?? 'info', timestamp: pino.stdTimeFunctions.isoTime },
    pino.destination({ dest: 1, sync: true }),
  );
}
