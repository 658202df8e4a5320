import { createHash } from 'node:crypto';
import { libraryDefinitions, scriptBody, SCRIPTS } from './scripts';

/**
 * The scripts as one Redis function library (Redis 7 FUNCTION LOAD): the
 * libraries' definitions run once, when Redis loads it, instead of on every
 * call as a prelude of each EVAL did (creating every helper and table of
 * about 70 KB of Lua each time). Each script becomes a function whose body
 * is the script's, after begin(keys, args) (lib/arguments.lua), which hands
 * the libraries the call's KEYS and ARGV and resets their per-call state.
 *
 * The library and its functions are named after a hash of the code, so
 * that replicas of two versions sharing one Redis (a rolling deploy) each
 * call their own code and never replace each other's. Function names are
 * global in Redis, hence the hash in each of them too.
 *
 * A function is a closure over the library's locals: Lua 5.1 allows it 60
 * upvalues, so a script may use at most 59 of the libraries' top-level
 * names (begin is the 60th; claim, the busiest, uses about 25); those
 * that would need more go through tables of helpers, as lib/workflows.lua
 * does. Likewise the libraries' top-level
 * locals (about 150) must stay under Lua's 200 per function, here the
 * library's chunk. Loading the library compiles every function, so a unit
 * test that loads it checks both for every script.
 */
export interface FunctionLibrary {
  /** The library's name: `ojs_<hash>`. */
  readonly name: string;
  /** The code FUNCTION LOAD takes, starting with its `#!lua name=` line. */
  readonly code: string;
  /** The function of a declared script (lua/<name>.lua): `ojs_<name>_<hash>`, dashes as underscores. */
  functionOf(scriptName: string): string;
}

/** Hex digits of the code's SHA-1 in the names: 64 bits, so that two versions never share one. */
const HASH_LENGTH = 16;

/** Where the hash goes in the code, before it is known. */
const HASH_MARK = '@HASH@';

function functionName(scriptName: string, hash: string): string {
  return `ojs_${scriptName.replaceAll('-', '_')}_${hash}`;
}

function registration(script: { name: string; isReadOnly?: true }): string {
  const flags = script.isReadOnly === true ? " flags = { 'no-writes' }," : '';
  return [
    `redis.register_function{ function_name = '${functionName(script.name, HASH_MARK)}',${flags} callback = function(keys, args)`,
    'begin(keys, args)',
    scriptBody(script.name),
    'end }',
  ].join('\n');
}

function build(): FunctionLibrary {
  const body = [libraryDefinitions(), ...SCRIPTS.map(registration)].join('\n');
  const hash = createHash('sha1').update(body).digest('hex').slice(0, HASH_LENGTH);
  const functions = new Map(SCRIPTS.map((script) => [script.name, functionName(script.name, hash)]));
  return {
    name: `ojs_${hash}`,
    code: `#!lua name=ojs_${hash}\n${body.replaceAll(HASH_MARK, hash)}`,
    functionOf(scriptName: string): string {
      const name = functions.get(scriptName);
      if (name === undefined) throw new Error(`no declared script ${scriptName}`);
      return name;
    },
  };
}

let built: FunctionLibrary | undefined;

/** The function library of the scripts (built once per process, from the .lua files). */
export function functionLibrary(): FunctionLibrary {
  built ??= build();
  return built;
}
