import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root';
import { eventually } from '../support/waiting';

/** A process this test may have to stop: its command line as /proc gives it. */
interface Started {
  pid: number;
  args: string[];
}

/** The processes of `pids` that still run, with their command lines. */
function runningOf(pids: readonly number[]): Started[] {
  return pids.flatMap((pid) => {
    try {
      return [{ pid, args: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean) }];
    } catch {
      return []; // gone meanwhile
    }
  });
}

/** The processes `pid` started and that still run (Linux: each thread's children in /proc). */
function childrenOf(pid: number): Started[] {
  return runningOf(
    readdirSync(`/proc/${pid}/task`).flatMap((thread) =>
      readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    ),
  );
}

/** A process's parent and start time (clock ticks since boot), from /proc/<pid>/stat; undefined once it is gone. */
function statOf(pid: number): { ppid: number; startTicks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command's name in parentheses: state, ppid, ... starttime (the 22nd field).
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), startTicks: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

/**
 * redis-servers and servers left to init (parent 1) that started since
 * `startTicks`: what a process that exited left running. Any test's such
 * leftover is found, not only this one's: each is a process no one stops.
 */
function orphansSince(startTicks: number): Started[] {
  const leftToInit = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      const stat = statOf(pid);
      return stat !== undefined && stat.ppid === 1 && stat.startTicks >= startTicks;
    });
  return runningOf(leftToInit).filter((p) => isRedis(p) || isServer(p));
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// redis-server sets its title to "redis-server <address>", and works in its data directory (--dir).
const isRedis = (p: Started): boolean => p.args[0]?.startsWith('redis-server') === true;
const isServer = (p: Started): boolean => p.args.some((arg) => arg.endsWith(join('dist', 'src', 'main.js')));

describe('npm run bench, interrupted', () => {
  let bench: ChildProcess;
  const seen: Started[] = [];
  let redisDir: string | undefined;

  afterAll(() => {
    // Whatever the run left behind, stopped here by its own PID.
    for (const { pid } of [...seen, { pid: bench.pid! }]) if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    if (redisDir !== undefined) rmSync(redisDir, { recursive: true, force: true });
  });

  it('stops the processes the run started, by PID, removes their data, and exits as SIGTERM would', async () => {
    // A run far from done when the signal comes: the Redis section, its redis-server and server started.
    bench = spawn(process.execPath, [join(projectRoot(), 'dist', 'bench', 'run.js')], {
      env: { ...process.env, BENCH_ONLY: 'redis', BENCH_JOBS: '10000000' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    bench.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => bench.once('exit', (code) => resolve(code)));
    const benchStartTicks = statOf(bench.pid!)!.startTicks;

    const started = await eventually(
      async () => {
        const children = childrenOf(bench.pid!);
        seen.push(...children);
        return children.some(isRedis) && children.some(isServer) ? children : undefined;
      },
      () => `a redis-server and a server started by the benchmark (its children: ${JSON.stringify(childrenOf(bench.pid!))})`,
      { timeoutMs: 30_000 },
    );
    redisDir = readlinkSync(`/proc/${started.find(isRedis)!.pid}/cwd`);
    expect(redisDir).toMatch(/ojs-redis-/);

    bench.kill('SIGTERM');
    expect(await exited).toBe(143);
    // Nothing the run started after the signal outlived it either (a phase still under way once started a redis-server).
    const orphans = orphansSince(benchStartTicks);
    seen.push(...orphans);
    expect(orphans).toEqual([]);
    expect(stderr).toContain('SIGTERM: stopping the processes this run started');
    expect(started.filter(({ pid }) => isRunning(pid))).toEqual([]);
    expect(existsSync(redisDir)).toBe(false);
  }, 60_000);
});
