import { Redis } from 'ioredis';
import { functionLibrary } from '../../../src/store/redis/function-library';
import { readArray, readString } from '../../../src/store/redis/reply';
import { SCRIPTS } from '../../../src/store/redis/scripts';
import { RedisServerProcess } from '../../../tools/redis-server';
import { startRedisWithClient, stopRedisWithClient } from '../../support/redis-with-client';

/**
 * The scripts' function library compiles in a real redis-server: Lua 5.1's
 * limits (60 upvalues per function, 200 locals) and the rules of function
 * libraries (no globals, no Redis calls while loading) are checked by
 * loading it, for every script.
 */

let redis: RedisServerProcess;
let client: Redis;
beforeAll(async () => {
  ({ redis, client } = await startRedisWithClient());
});
afterAll(() => stopRedisWithClient({ redis, client }));

/** FUNCTION LIST's entry as a record (a flat list of field, value). */
function entry(flat: unknown): Map<string, unknown> {
  const fields = readArray(flat, 'function list entry');
  const record = new Map<string, unknown>();
  for (let i = 0; i < fields.length; i += 2) record.set(readString(fields[i], 'field'), fields[i + 1]);
  return record;
}

describe('the scripts function library', () => {
  const library = functionLibrary();

  it('loads into Redis, one function per declared script, the read-only ones flagged no-writes', async () => {
    expect(await client.call('function', 'load', library.code)).toBe(library.name);
    const [listed] = readArray(await client.call('function', 'list', 'libraryname', library.name), 'libraries');
    const functions = readArray(entry(listed).get('functions'), 'functions').map(entry);
    const flagsOf = new Map(functions.map((f) => [readString(f.get('name'), 'name'), readArray(f.get('flags'), 'flags')]));
    expect([...flagsOf.keys()].toSorted()).toEqual(SCRIPTS.map((script) => library.functionOf(script.name)).toSorted());
    for (const script of SCRIPTS) {
      const isReadOnly = 'isReadOnly' in script && script.isReadOnly === true;
      expect({ script: script.name, flags: flagsOf.get(library.functionOf(script.name)) }).toEqual({
        script: script.name,
        flags: isReadOnly ? ['no-writes'] : [],
      });
    }
  });

  it('names the library and every function after a hash of the code, so that two versions never share a name', () => {
    const hash = /^ojs_([0-9a-f]{16})$/.exec(library.name)?.[1];
    expect(hash).toBeDefined();
    expect(library.code.startsWith(`#!lua name=${library.name}\n`)).toBe(true);
    expect(library.functionOf('cancel-jobs')).toBe(`ojs_cancel_jobs_${hash}`);
    expect(() => library.functionOf('no-such-script')).toThrow(/no declared script/);
  });
});
