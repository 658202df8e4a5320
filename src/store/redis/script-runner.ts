import { Cluster, type Redis } from 'ioredis';
import { FunctionCall } from './function-call';
import { functionLibrary, type FunctionLibrary } from './function-library';
import { KEY_LIST_SEPARATOR } from './keys';
import { arg, type RedisScript, type ScriptArg, type ScriptSettings } from './script';

/**
 * What follows the function's name in every FCALL (and the script in an
 * EVAL): one key, the first (a cluster routes the call by it, and every key
 * shares its slot), then the settings: all the keys joined in one text, and
 * the event log's length. One text, not thirty KEYS: Redis parses each
 * argument of a call and makes it a Lua string, over a thousand instructions
 * apiece, and the scripts build their key names from that text only when it
 * changes (lua/lib/ojs.lua).
 */
export function scriptPrologue(keys: readonly string[], settings: ScriptSettings): ScriptArg[] {
  return [1, keys[0]!, keys.join(KEY_LIST_SEPARATOR), arg.int(settings.eventLogLength, 'event log length')];
}

/**
 * Runs declared scripts as the functions of the scripts' library
 * (function-library.ts): FCALL, and when Redis does not know the function
 * (a Redis restarted without persistence, a failover to a node without the
 * library, a flushed Redis) FUNCTION LOAD, then FCALL again. A "Function
 * not found" answer means the call did not run, so sending it again is
 * safe. On Redis Cluster the library is loaded on every master, since each
 * deployment's slot may move. A call goes to ioredis as a FunctionCall,
 * its request already written (function-call.ts).
 */
export class ScriptRunner {
  /** What every call starts with after the function's name. */
  private readonly prologue: ScriptArg[];
  private readonly settings: ScriptSettings;
  /** What a cluster routes every call by: all of a call's keys share its slot. */
  private readonly firstKey: string;
  private readonly library = functionLibrary();
  /** The library's load under way, shared by the calls that found it missing meanwhile. */
  private loading: Promise<void> | undefined;

  constructor(
    private readonly redis: Redis | Cluster,
    keys: readonly string[],
    settings: ScriptSettings,
  ) {
    this.prologue = scriptPrologue(keys, settings);
    this.settings = settings;
    this.firstKey = keys[0]!;
  }

  /** Runs `script` with `params`; Redis failures are thrown as they come (the store turns them into OjsErrors). */
  async run<P, R>(script: RedisScript<P, R>, params: P): Promise<R> {
    const head: ScriptArg[] = [this.library.functionOf(script.name), ...this.prologue];
    const args = script.encode(params, this.settings);
    let reply: unknown;
    try {
      reply = await this.redis.sendCommand(new FunctionCall(head, args, this.firstKey));
    } catch (error) {
      if (!isFunctionMissing(error)) throw error;
      await this.load();
      reply = await this.redis.sendCommand(new FunctionCall(head, args, this.firstKey));
    }
    return script.decode(reply, params);
  }

  private load(): Promise<void> {
    this.loading ??= loadLibrary(this.redis, this.library).finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }
}

function isFunctionMissing(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('ERR Function not found');
}

/** Loads the library on Redis, or on every master of a cluster; one that holds it already (another replica loaded it) is fine. */
async function loadLibrary(redis: Redis | Cluster, library: FunctionLibrary): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  await Promise.all(
    nodes.map(async (node) => {
      try {
        await node.call('function', 'load', library.code);
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith(`ERR Library '${library.name}' already exists`))) throw error;
      }
    }),
  );
}
