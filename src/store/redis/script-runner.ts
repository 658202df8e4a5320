import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { RedisScript, ScriptArg } from './script';
import { scriptSource } from './scripts';

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

  constructor(
    private readonly redis: Redis | Cluster,
    private readonly keys: readonly string[],
  ) {}

  /** Runs `script` with `params`; Redis failures are thrown as they come (the store turns them into OjsErrors). */
  async run<P, R>(script: RedisScript<P, R>, params: P): Promise<R> {
    const { sha, source } = this.load(script.name);
    const command: ScriptArg[] = [sha, this.keys.length].concat(this.keys, script.encode(params));
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
