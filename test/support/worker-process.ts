import { join } from 'node:path';
import { projectRoot } from '../../src/project-root';
import { JsonLinesProcess, type JsonLine } from '../../tools/json-lines-process';

/**
 * The SDK test worker (tools/sdk-test-worker.ts, built into dist/) as a real
 * process: its pino log lines ({ msg, ... }) and test events ({ test, ... }).
 */
export class WorkerProcess extends JsonLinesProcess {
  /** Starts the worker against `address` and resolves once it has started. */
  static async start(address: string, env: Record<string, string> = {}): Promise<WorkerProcess> {
    const worker = new WorkerProcess('the SDK worker', process.execPath, [join(projectRoot(), 'dist', 'tools', 'sdk-test-worker.js')], {
      env: { ...process.env, OJS_SERVER: address, OJS_LOG_LEVEL: 'debug', ...env },
    });
    await worker.log('worker started');
    return worker;
  }

  get workerId(): string {
    return String(this.lines.find((l) => l['msg'] === 'worker started')?.['workerId']);
  }

  /** The first log line with this message (and fields). */
  log(msg: string, fields: JsonLine = {}): Promise<JsonLine> {
    return this.waitFor((l) => l['msg'] === msg && matches(l, fields), JSON.stringify({ msg, ...fields }));
  }

  /** The test event `test` (e.g. "start", "done", "threw", "phase") about `jobId`, or any job. */
  event(test: string, jobId?: string, fields: JsonLine = {}): Promise<JsonLine> {
    const wanted = jobId === undefined ? fields : { jobId, ...fields };
    return this.waitFor((l) => l['test'] === test && matches(l, wanted), JSON.stringify({ test, ...wanted }));
  }
}

function matches(line: JsonLine, fields: JsonLine): boolean {
  return Object.entries(fields).every(([key, value]) => line[key] === value);
}
