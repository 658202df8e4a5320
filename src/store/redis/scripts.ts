import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis } from 'ioredis';
import { projectRoot } from '../../project-root';

/** Every script, named after its file in lua/ (one atomic transition per file). */
export const SCRIPT_NAMES = [
  'enqueue',
  'claim',
  'settle',
  'release-undelivered',
  'extend-lease',
  'record-progress',
  'cancel',
  'activate',
  'retry',
  'promote-due',
  'find-expired-waiting',
  'discard-waiting',
  'take-soft-timeouts',
  'find-expired-leases',
  'list-active-heartbeats',
  'prune-terminal',
  'register-worker',
  'read-workers',
  'record-beat',
  'direct-worker',
  'queue-counts',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** Where the .lua files live (read from src/ in both source and compiled runs). */
export const LUA_DIR = join(projectRoot(), 'src', 'store', 'redis', 'lua');
const LIBRARY = 'lib/ojs.lua';

/** The number of KEYS every script receives (RedisKeys.scriptKeys). */
export const SCRIPT_KEY_COUNT = 14;

const commandName = (name: ScriptName): string => `ojs_${name.replace(/-/g, '_')}`;

/** A script's source: the shared helper library, then the script itself. */
export function scriptSource(name: ScriptName): string {
  return `${readFileSync(join(LUA_DIR, LIBRARY), 'utf8')}\n${readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8')}`;
}

export type ScriptArg = string | number;
export type ScriptRunner = (name: ScriptName, keys: readonly string[], args: readonly ScriptArg[]) => Promise<unknown>;

/**
 * Registers every script on the client (ioredis sends EVALSHA and falls back
 * to EVAL when Redis does not know the script yet, e.g. after a restart) and
 * returns a function that runs one.
 */
export function defineScripts(redis: Redis | Cluster): ScriptRunner {
  for (const name of SCRIPT_NAMES) {
    redis.defineCommand(commandName(name), { numberOfKeys: SCRIPT_KEY_COUNT, lua: scriptSource(name) });
  }
  // ioredis adds defined commands as methods at run time; this view gives them a type.
  const commands = redis as unknown as Record<string, (...args: ScriptArg[]) => Promise<unknown>>;
  return (name, keys, args) => commands[commandName(name)]!.call(redis, ...keys, ...args);
}
