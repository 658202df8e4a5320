import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RedisKeys } from '../../../src/store/redis/keys';
import { LUA_DIR, SCRIPT_KEY_COUNT, SCRIPT_NAMES, scriptSource } from '../../../src/store/redis/scripts';

describe('the Redis script registry', () => {
  const files = readdirSync(LUA_DIR)
    .filter((file) => file.endsWith('.lua'))
    .map((file) => file.replace(/\.lua$/, ''))
    .toSorted();

  it('registers every .lua file, and every registration has a file', () => {
    expect(SCRIPT_NAMES.toSorted()).toEqual(files);
  });

  it.each(files)('gives %s.lua a header naming its transition, preconditions and arguments', (name) => {
    const header = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8').split(']]')[0]!;
    expect(header.startsWith(`--[[\n  ${name}`)).toBe(true);
    expect(header).toContain('ARGV:');
    expect(header).toMatch(/Returns:/);
  });

  it('prepends the helper library to every script', () => {
    for (const name of SCRIPT_NAMES) expect(scriptSource(name)).toContain('local function enter(');
  });

  it('passes every script the keys the library names, all in the prefix hash slot', () => {
    const keys = new RedisKeys('{ojs}').scriptKeys();
    expect(keys).toHaveLength(SCRIPT_KEY_COUNT);
    expect(keys.every((key) => key.startsWith('{ojs}:'))).toBe(true);
    expect(() => new RedisKeys('ojs')).toThrow(/hash tag/);
  });
});
