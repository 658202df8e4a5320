import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { RedisServerProcess, type RedisServerOptions } from '../tools/redis-server';
import { serverEntry, ServerProcess } from '../tools/server-process';
import { cleanUp, WAIT_MS } from './deadline';

const serverRootSetting = process.env['BENCH_SERVER_ROOT'];
/**
 * The checkout whose server the benchmark runs: BENCH_SERVER_ROOT names
 * another one, built there (`npm run build`), so that two builds' servers
 * are measured by the same clients, workers and loads, this checkout's.
 * Unset: this checkout's own server.
 */
export const SERVER_ROOT: string | undefined = serverRootSetting === undefined ? undefined : resolve(serverRootSetting);
const SERVER_ENTRY = serverEntry(SERVER_ROOT);

/** Fails at once, saying why, when the checkout whose server the run measures has no build of it. */
export function assertServerBuilt(): void {
  if (existsSync(SERVER_ENTRY)) return;
  const which = SERVER_ROOT === undefined ? 'this checkout' : `BENCH_SERVER_ROOT=${SERVER_ROOT}`;
  throw new Error(`${which}: no server at ${SERVER_ENTRY}; run \`npm ci && npm run build\` in that checkout`);
}

/**
 * The processes this run started that may still run, each with how to kill
 * it: a cleanup that passed its deadline moves on without them, and the
 * run kills them by PID before it exits, so that none outlives it.
 */
const leftovers = new Set<() => Promise<void>>();
/**
 * Set once the run kills its leftovers, before it exits: the phases under
 * way go on failing meanwhile, and the next one must not start a process
 * that nothing would kill (an interrupted run once left a redis-server so).
 */
let isStopping = false;

/**
 * Keeps `kill` for the end of the run until the returned function is
 * called (the process has stopped); once the run is stopping, kills at
 * once the process just started.
 */
export function track(kill: () => Promise<void>): () => void {
  if (isStopping) {
    void kill();
    return () => {};
  }
  leftovers.add(kill);
  return () => leftovers.delete(kill);
}

/** Fails, instead of starting `what`, once the run is stopping. */
function refuseOnceStopping(what: string): void {
  if (isStopping) throw new Error(`${what} not started: the run is stopping`);
}

/** Starts of processes that are tracked only once ready (a redis-server's), which killLeftovers waits for. */
const pendingStarts = new Set<Promise<unknown>>();

/** Runs `start`, which tracks what it starts before it ends, as one of the pendingStarts. */
async function trackedStart<T>(start: Promise<T>): Promise<T> {
  pendingStarts.add(start);
  try {
    return await start;
  } finally {
    pendingStarts.delete(start);
  }
}

/** Kills (SIGKILL, by PID) every process started and not seen to stop, and those still starting; nothing starts after. */
export async function killLeftovers(): Promise<void> {
  isStopping = true;
  await Promise.allSettled(pendingStarts);
  await Promise.all([...leftovers].map((kill) => kill()));
  leftovers.clear();
}

/** Runs `use` with a server process of its own, stopped (killed if it will not stop) whatever happens. */
export async function withServerProcess<T>(env: Record<string, string>, use: (server: ServerProcess) => Promise<T>): Promise<T> {
  refuseOnceStopping('a server process');
  // Tracked from its spawn: a run interrupted while the server starts still kills it.
  let untrack: (() => void) | undefined;
  const server = await ServerProcess.start(env, [], undefined, (spawned) => (untrack = track(() => spawned.kill())), SERVER_ENTRY);
  try {
    return await use(server);
  } finally {
    await cleanUp(
      'the server process stopping',
      WAIT_MS,
      server.stop().catch(() => server.kill()),
    );
    if (!server.isRunning) untrack?.();
  }
}

export const withServer = <T>(env: Record<string, string>, use: (address: string) => Promise<T>): Promise<T> =>
  withServerProcess(env, (server) => use(server.address));

/** Runs `use` with a redis-server of its own, destroyed whatever happens. */
export async function withRedis<T>(use: (redis: RedisServerProcess) => Promise<T>, options?: RedisServerOptions): Promise<T> {
  refuseOnceStopping('a redis-server');
  let untrack: (() => void) | undefined;
  // Tracked in the start itself: a run stopping meanwhile waits for it, and then kills it.
  const redis = await trackedStart(
    RedisServerProcess.start(options).then((started) => {
      untrack = track(() => started.destroy('SIGKILL'));
      return started;
    }),
  );
  try {
    return await use(redis);
  } finally {
    await cleanUp('redis-server stopping', WAIT_MS, redis.destroy());
    if (redis.pid === undefined) untrack?.();
  }
}

/** The environment of a server process on the Redis store at `port`. */
export function redisEnv(port: number): Record<string, string> {
  return { OJS_BACKEND: 'redis', REDIS_URL: `redis://127.0.0.1:${port}` };
}
