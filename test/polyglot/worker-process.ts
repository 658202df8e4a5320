import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root';
import { JsonLinesProcess } from '../../tools/json-lines-process';

export type Language = 'python' | 'go';

/** One JSON line an example worker printed, e.g. {"event":"acked","job_id":"..."}. */
export interface WorkerEvent {
  event: string;
  ts: number;
  [field: string]: unknown;
}

export interface WorkerOptions {
  server: string;
  workerId: string;
  queues: string[];
  concurrency: number;
  /** As the workers read it: "1500ms", "25s"... */
  gracePeriod?: string;
  /** More environment: the security settings (OJS_TLS_CA, OJS_TLS_CERT, OJS_TLS_KEY, OJS_TOKEN). */
  env?: Record<string, string>;
}

const root = projectRoot();
/** Debian's python3, which has grpcio; the one on PATH may be another. */
const PYTHON = '/usr/bin/python3';
const GO_WORKER = join(root, 'examples', 'go-worker', 'build', 'ojs-go-worker');

/** Generates both workers' stubs from proto/ and builds the Go worker (scripts/polyglot-stubs.mjs). */
export function buildExampleWorkers(): void {
  execFileSync(process.execPath, [join(root, 'scripts', 'polyglot-stubs.mjs'), '--build'], { cwd: root, stdio: 'pipe' });
}

/** An example worker as a process of its own, printing one JSON event per line. */
export class WorkerProcess extends JsonLinesProcess {
  private constructor(
    readonly language: Language,
    command: string,
    args: string[],
    env: NodeJS.ProcessEnv,
  ) {
    super(`the ${language} worker`, command, args, { env });
  }

  static start(language: Language, options: WorkerOptions): WorkerProcess {
    const env = {
      ...process.env,
      OJS_SERVER: options.server,
      OJS_WORKER_ID: options.workerId,
      OJS_QUEUES: options.queues.join(','),
      OJS_CONCURRENCY: String(options.concurrency),
      OJS_SHUTDOWN_GRACE_PERIOD: options.gracePeriod ?? '25s',
      OJS_VERBOSE: '1',
      PYTHONDONTWRITEBYTECODE: '1',
      ...options.env,
    };
    const [command, args] =
      language === 'python' ? [PYTHON, ['-u', join(root, 'examples', 'python-worker', 'worker.py')]] : [GO_WORKER, []];
    return new WorkerProcess(language, command, args, env);
  }

  get events(): WorkerEvent[] {
    return this.lines as WorkerEvent[];
  }

  /** Events matching: an event name, optionally with fields that must be equal. */
  all(event: string, fields: Record<string, unknown> = {}): WorkerEvent[] {
    return this.events.filter((e) => matches(e, event, fields));
  }

  /** The first event matching, printed already or to come; rejects if the worker exits or `timeoutMs` passes first. */
  waitForEvent(event: string, fields: Record<string, unknown> = {}, timeoutMs = 10_000): Promise<WorkerEvent> {
    return this.waitFor(
      (line) => matches(line as WorkerEvent, event, fields),
      JSON.stringify({ event, ...fields }),
      timeoutMs,
    ) as Promise<WorkerEvent>;
  }
}

function matches(e: WorkerEvent, event: string, fields: Record<string, unknown>): boolean {
  return e.event === event && Object.entries(fields).every(([key, value]) => e[key] === value);
}
