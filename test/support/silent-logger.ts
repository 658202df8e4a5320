import type { Logger } from '../../src/app/ports';

/** A logger that keeps what it is told, for tests that assert on logs. */
export class RecordingLogger implements Logger {
  readonly entries: { level: string; context: object; message: string }[] = [];
  debug(context: object, message: string): void {
    this.entries.push({ level: 'debug', context, message });
  }
  info(context: object, message: string): void {
    this.entries.push({ level: 'info', context, message });
  }
  warn(context: object, message: string): void {
    this.entries.push({ level: 'warn', context, message });
  }
  error(context: object, message: string): void {
    this.entries.push({ level: 'error', context, message });
  }
}
