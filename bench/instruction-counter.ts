import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Instructions a process runs, counted by valgrind's callgrind: the same
 * count for the same work on any machine, however fast it runs or whatever
 * else it runs, where CPU time wanders with both. The process is started
 * under `COUNTED_BY_CALLGRIND` and counts nothing until `start`; `zero`
 * and `read` bracket what is measured (callgrind_control, by its PID).
 * Between the two its own timers count too (Redis's cron runs ten times a
 * second, a few thousand instructions each): far below a measured call.
 */
export class InstructionCounter {
  constructor(private readonly pid: number) {}

  /** Whether valgrind and callgrind_control are installed. */
  static async isAvailable(): Promise<boolean> {
    try {
      await run('valgrind', ['--version']);
      await run('sh', ['-c', 'command -v callgrind_control']);
      return true;
    } catch {
      return false;
    }
  }

  /** Counting starts (instrumentation on). */
  async start(): Promise<void> {
    await this.control('--instr=on');
  }

  async zero(): Promise<void> {
    await this.control('--zero');
  }

  /** Instructions run since the last zero, by all of the process's threads. */
  async read(): Promise<number> {
    const output = await this.control('-e');
    // "  Totals:    Ir", then one line per thread: "   Th 1  405,121".
    const threads = [...output.matchAll(/^\s*Th\s+\d+\s+([\d,]+)\s*$/gm)];
    if (threads.length === 0) throw new Error(`callgrind_control printed no counts for PID ${this.pid}: ${output}`);
    return threads.reduce((sum, [, counted]) => sum + Number(counted!.replaceAll(',', '')), 0);
  }

  private async control(option: string): Promise<string> {
    const { stdout } = await run('callgrind_control', [option, String(this.pid)]);
    return stdout;
  }
}

/**
 * What a counted process runs under (RedisServerOptions.runUnder): callgrind,
 * counting nothing until told, writing its profile nowhere.
 */
export const COUNTED_BY_CALLGRIND = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--callgrind-out-file=/dev/null'] as const;
