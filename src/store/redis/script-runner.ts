import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { arg, type RedisScript, type ScriptArg } from './script';
import { scriptSource } from './scripts';

/**
 * What every script receives before its own arguments (lib/arguments.lua reads
 * them as ARGV[1]...): the settings of the deployment that scripts apply as
 * they write, such as how many facts the event log keeps.
 */
export interface ScriptSettings {
  /** The event log's length: the facts it keeps (0: no log). */
  eventLogLength: number;
}

/** What follows the script in every EVAL and EVALSHA: the key count, KEYS, then the settings. */
export function scriptPrologue(keys: readonly string[], settings: ScriptSettings): ScriptArg[] {
  return [keys.length, ...keys, arg.int(settings.eventLogLength, 'event log length')];
}

interface LoadedScript {
  source: string;
  sha: string;
}

/**
 * Runs declared scripts: EVALSHA, and EVAL with the source when Redis does
 * not know the script yet (after a restart or a failover), which happens
 * once per script and server. A NOSCRIPT answer means the script did not
 * run, so sending it again is safe. Arguments go to ioredis as one array
 * (it flattens it into the command), never spread into a call: a batch of
 * tens of thousands of values would overflow the stack.
 */
export class ScriptRunner {
  private readonly loaded = new Map<string, LoadedScript>();
  /** What every call starts with after the script. */
  private readonly prologue: ScriptArg[];

  constructor(
    private readonly redis: Redis | Cluster,
    keys: readonly string[],
    settings: ScriptSettings,
  ) {
    this.prologue = scriptPrologue(keys, settings);
  }

  /** Runs `script` with `params`; Redis failures are thrown as they come (the store turns them into OjsErrors). */
  async run<P, R>(script: RedisScript<P, R>, params: P): Promise<R> {
    const { sha, source } = this.load(script.name);
    const head: ScriptArg[] = [sha];
    const command = head.concat(this.prologue, script.encode(params));
    let reply: unknown;
    try {
      reply = await this.redis.call('evalsha', command);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      command[0] = source;
      reply = await this.redis.call('eval', command);
    }
    return script.decode(reply, params);
  }

  private load(name: string): LoadedScript {
    let loaded = this.loaded.get(name);
    if (loaded === undefined) {
      const source = scriptSource(name);
      loaded = { source, sha: createHash('sha1').update(source).digest('hex') };
      this.loaded.set(name, loaded);
    }
    return loaded;
  }
}
