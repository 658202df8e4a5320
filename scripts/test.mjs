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
import { ensureChromium } from './ensure-chromium.mjs';
import { ensureValgrind } from './ensure-valgrind.mjs';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);
/**
 * Our own code: what oxlint and the layering rules check (package.json "lint" names the same directories).
 * The SDK package's gen/ and lib/ are copies (buf, scripts/sdk-lib-copies.mjs), checked for staleness instead.
 */
const LINTED = ['src', 'lib', 'packages/sdk/src', 'cli', 'web', 'test', 'bench', 'tools', 'scripts', 'examples'];

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

/** What `buf generate` writes (buf.gen.yaml): the server's gen/, and the SDK package's own copy. */
const GENERATED = ['gen', join('packages', 'sdk', 'gen')];

function checkGeneratedCode() {
  console.log('\n== generated code is up to date with proto/');
  const fresh = mkdtempSync(join(tmpdir(), 'ojs-gen-'));
  try {
    execFileSync(bin('buf'), ['generate', '--output', fresh], { cwd: root, stdio: 'inherit' });
    execFileSync(bin('buf'), ['build', '-o', join(fresh, 'gen', 'descriptor-set.binpb')], { cwd: root, stdio: 'inherit' });
    const stale = GENERATED.flatMap((dir) => staleFiles(join(root, dir), join(fresh, dir)).map((file) => join(dir, file)));
    if (stale.length > 0) {
      console.error(`generated code is stale (${stale.join(', ')}). Run \`npm run generate\` and commit ${GENERATED.join(' and ')}.`);
      process.exit(1);
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

/** Files that differ between the committed and the freshly generated directory, or are in one only. */
function staleFiles(committedDir, generatedDir) {
  const committed = files(committedDir)
    .map((f) => relative(committedDir, f))
    .toSorted();
  const generated = files(generatedDir)
    .map((f) => relative(generatedDir, f))
    .toSorted();
  return [...new Set([...committed, ...generated])].filter(
    (file) =>
      !committed.includes(file) ||
      !generated.includes(file) ||
      !readFileSync(join(committedDir, file)).equals(readFileSync(join(generatedDir, file))),
  );
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
step('packages/sdk/lib/ is up to date with lib/', process.execPath, [join(root, 'scripts', 'sdk-lib-copies.mjs'), '--check']);
step('type check', bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']);
step('lint', bin('oxlint'), ['--type-aware', '--deny-warnings', ...LINTED]);
step('format', bin('prettier'), ['--check', '.']);
step('layering rules', bin('depcruise'), ['--config', '.dependency-cruiser.cjs', ...LINTED]);
step('build', bin('tsc'), ['-p', 'tsconfig.build.json']);
step('type check the web dashboard', bin('tsc'), ['--noEmit', '-p', 'web/tsconfig.json']);
step('build the web dashboard', process.execPath, [join(root, 'scripts', 'build-web.mjs')]);
checkLuaPrelude();
console.log('\n== test dependencies');
ensurePolyglot();
ensureRedis();
ensureNginx();
ensureOpenssl();
ensureChromium();
ensureValgrind();
step('jest', bin('jest'), process.argv.slice(2));
