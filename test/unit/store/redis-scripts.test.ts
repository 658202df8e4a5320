import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OjsError } from '../../../src/domain/errors';
import { RedisKeys } from '../../../src/store/redis/keys';
import { appendBatch, arg } from '../../../src/store/redis/script';
import { functionLibrary } from '../../../src/store/redis/function-library';
import { LUA_DIR, LUA_LIBRARIES, SCRIPT_KEY_COUNT, SCRIPTS } from '../../../src/store/redis/scripts';

describe('the Redis script registry', () => {
  const files = readdirSync(LUA_DIR)
    .filter((file) => file.endsWith('.lua'))
    .map((file) => file.replace(/\.lua$/, ''))
    .toSorted();
  const names = SCRIPTS.map((script) => script.name);

  it('declares every .lua file once, and every declaration has a file', () => {
    expect(names.toSorted()).toEqual(files);
    expect(new Set(names).size).toBe(names.length);
  });

  it('declares each script in scripts/<name>.ts beside its file', () => {
    const declarations = readdirSync(join(LUA_DIR, '..', 'scripts')).map((file) => file.replace(/\.ts$/, ''));
    expect(declarations).toEqual(expect.arrayContaining(files));
  });

  it.each(files)('gives %s.lua a header naming its transition, preconditions and arguments', (name) => {
    const header = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8').split(']]')[0]!;
    expect(header.startsWith(`--[[\n  ${name}`)).toBe(true);
    expect(header).toContain('ARGV:');
    expect(header).toMatch(/Returns:/);
  });

  it.each(files)('has %s.lua read its arguments through the checking helpers only', (name) => {
    const code = readFileSync(join(LUA_DIR, `${name}.lua`), 'utf8')
      .replace(/--\[\[[\s\S]*?\]\]/g, '')
      .replace(/--.*$/gm, '');
    // ARGV is read by lib/arguments.lua's arg* helpers, which refuse bad values before any write, and KEYS
    // through lib/ojs.lua's K: a function has neither global, only what begin(keys, args) hands the libraries.
    expect(code).not.toMatch(/\b(KEYS|ARGV)\b/);
  });

  it('loads the generated domain rules, then the helper libraries, before the scripts', () => {
    expect(LUA_LIBRARIES).toEqual([
      'lib/domain.lua',
      'lib/arguments.lua',
      'lib/ojs.lua',
      'lib/job-changes.lua',
      'lib/new-jobs.lua',
      'lib/schedules.lua',
      'lib/workers.lua',
      'lib/workflows.lua',
    ]);
    // Every library file is one of them.
    expect(readdirSync(join(LUA_DIR, 'lib')).toSorted()).toEqual(LUA_LIBRARIES.map((file) => file.slice('lib/'.length)).toSorted());
    const { code } = functionLibrary();
    expect(code.indexOf('local NEXT_STATES')).toBeLessThan(code.indexOf('local function enter('));
    expect(code.indexOf('local function enter(')).toBeLessThan(code.indexOf('redis.register_function'));
  });

  it('passes every script the keys the library names, all in the prefix hash slot', () => {
    const keys = new RedisKeys('{ojs}').scriptKeys();
    expect(keys).toHaveLength(SCRIPT_KEY_COUNT);
    expect(keys.every((key) => key.startsWith('{ojs}:'))).toBe(true);
    expect(() => new RedisKeys('ojs')).toThrow(/hash tag/);
    // The keys travel joined by a control character (scriptPrologue), which no prefix may hold.
    expect(() => new RedisKeys('{ojs}\x1f')).toThrow(/control character/);
  });

  it('escapes the glob characters of the prefix in the audit scan pattern', () => {
    expect(new RedisKeys('{ojs}').scanPattern()).toBe('{ojs}:*');
    expect(new RedisKeys('{a*b}[x]?').scanPattern()).toBe('{a\\*b}\\[x\\]\\?:*');
  });
});

describe('script argument encoders', () => {
  const refused = (encode: () => unknown): OjsError | undefined => {
    try {
      encode();
    } catch (error) {
      if (error instanceof OjsError) return error;
    }
    return undefined;
  };

  it.each([Number.NaN, Infinity, -Infinity, 1.5, 2 ** 53])('refuses %p where an integer is meant', (value) => {
    expect(refused(() => arg.int(value, 'now'))).toMatchObject({ code: 'backend_error' });
  });

  it('refuses NaN and the infinities where a number is meant, and empty or missing ids', () => {
    expect(refused(() => arg.number(Number.NaN, 'progress'))).toMatchObject({ code: 'backend_error' });
    expect(refused(() => arg.number(Infinity, 'progress'))).toMatchObject({ code: 'backend_error' });
    expect(refused(() => arg.id('', 'job id'))).toMatchObject({ code: 'backend_error' });
    expect(refused(() => arg.id(undefined as unknown as string, 'job id'))).toMatchObject({ code: 'backend_error' });
    expect(arg.optionalInt(undefined, 'deadline')).toBe('');
    expect(arg.number(0.25, 'progress')).toBe(0.25);
  });

  it('lays a batch out as count, stride, then each item in field order, without spreading it into a call', () => {
    const items = Array.from({ length: 200_000 }, (_, i) => ({ id: `j${i}`, n: i }));
    const args = appendBatch(['now'], ['n', 'id'] as const, items, (item) => ({ id: item.id, n: item.n }));
    expect(args.slice(0, 7)).toEqual(['now', 200_000, 2, 0, 'j0', 1, 'j1']);
    expect(args).toHaveLength(3 + 400_000);
  });
});
