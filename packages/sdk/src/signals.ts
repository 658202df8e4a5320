import type { Logger } from './logger';

/** What signals act on. */
interface Stoppable {
  readonly phase: string;
  stop(options?: { force?: boolean }): Promise<void>;
  quiet(): void;
  resume(): void;
}

/**
 * The signals of worker-protocol section 9 with the decisions of the spec
 * README: SIGTERM and SIGINT stop gracefully and a second one forces the
 * stop; SIGTSTP quiets; SIGCONT resumes from quiet. Returns the uninstall.
 */
export function installSignalHandlers(worker: Stoppable, logger: Logger): () => void {
  const stop = (signal: NodeJS.Signals): void => {
    if (worker.phase === 'stopping') {
      logger.warn({ signal }, 'second signal: stopping now');
      void worker.stop({ force: true });
      return;
    }
    logger.info({ signal }, 'signal: stopping gracefully');
    void worker.stop();
  };
  const quiet = (): void => {
    logger.info({ signal: 'SIGTSTP' }, 'signal: quiet');
    worker.quiet();
  };
  const resume = (): void => {
    logger.info({ signal: 'SIGCONT' }, 'signal: resume');
    worker.resume();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('SIGTSTP', quiet);
  process.on('SIGCONT', resume);
  return () => {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    process.off('SIGTSTP', quiet);
    process.off('SIGCONT', resume);
  };
}
