#!/usr/bin/env node
// The whole test suite, as README.md and .ci/run invoke it (`npm test`).
// It fails if generated code is stale, types, lint or formatting fail, or the layering
// rules are broken, then builds (process tests run dist/) and runs jest.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { ensurePolyglot } from './ensure-polyglot.mjs';
import { ensureNginx } from './ensure-nginx.mjs';
import { ensureRedis } from './ensure-redis.mjs';
import { ensureOpenssl } from './ensure-openssl.mjs';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);
/** Our own code: what oxlint and the layering rules check (package.json "lint" names the same directories). */
const LINTED = ['src', 'lib', 'sdk', 'test', 'bench', 'tools', 'scripts', 'examples'];

function step(title, command, args) {
  console.log(`\n== ${title}`);
  execFileSync(command, args, { cwd: root, stdio: 'inherit' });
}

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

function checkGeneratedCode() {
  console.log('\n== generated code is up to date with proto/');
  const fresh = mkdtempSync(join(tmpdir(), 'ojs-gen-'));
  try {
    execFileSync(bin('buf'), ['generate', '--output', fresh], { cwd: root, stdio: 'inherit' });
    execFileSync(bin('buf'), ['build', '-o', join(fresh, 'gen', 'descriptor-set.binpb')], { cwd: root, stdio: 'inherit' });
    const committed = files(join(root, 'gen'))
      .map((f) => relative(join(root, 'gen'), f))
      .toSorted();
    const generated = files(join(fresh, 'gen'))
      .map((f) => relative(join(fresh, 'gen'), f))
      .toSorted();
    const stale = [...new Set([...committed, ...generated])].filter((file) => {
      const a = join(root, 'gen', file);
      const b = join(fresh, 'gen', file);
      return !committed.includes(file) || !generated.includes(file) || !readFileSync(a).equals(readFileSync(b));
    });
    if (stale.length > 0) {
      console.error(`gen/ is stale (${stale.join(', ')}). Run \`npm run generate\` and commit gen/.`);
      process.exit(1);
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/** The Lua prelude generated from the domain (tools/generate-lua-prelude.ts, built into dist/) is up to date. */
function checkLuaPrelude() {
  console.log('\n== src/store/redis/lua/lib/domain.lua is up to date with src/domain');
  const committed = join(root, 'src', 'store', 'redis', 'lua', 'lib', 'domain.lua');
  const fresh = mkdtempSync(join(tmpdir(), 'ojs-lua-'));
  try {
    const generated = join(fresh, 'domain.lua');
    execFileSync(process.execPath, [join(root, 'dist', 'tools', 'generate-lua-prelude.js'), generated], { cwd: root, stdio: 'inherit' });
    if (!readFileSync(committed).equals(readFileSync(generated))) {
      console.error('src/store/redis/lua/lib/domain.lua is stale: run `npm run generate` and commit it.');
      process.exit(1);
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

step('package-lock.json is complete', process.execPath, [join(root, 'scripts', 'complete-lockfile.mjs'), '--check']);
step('buf lint', bin('buf'), ['lint']);
checkGeneratedCode();
step('type check', bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']);
step('lint', bin('oxlint'), ['--type-aware', '--deny-warnings', ...LINTED]);
step('format', bin('prettier'), ['--check', '.']);
step('layering rules', bin('depcruise'), ['--config', '.dependency-cruiser.cjs', ...LINTED]);
step('build', bin('tsc'), ['-p', 'tsconfig.build.json']);
checkLuaPrelude();
console.log('\n== test dependencies');
ensurePolyglot();
ensureRedis();
ensureNginx();
ensureOpenssl();
step('jest', bin('jest'), process.argv.slice(2));
