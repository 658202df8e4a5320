#!/usr/bin/env node
// Completes package-lock.json with the platform packages our registry does not serve.
//
// The npm registry of this project's machines serves native packages for Linux
// x64 only (@swc/core-darwin-arm64 and the like answer 404). `npm install` then
// leaves those optional packages out of package-lock.json, and `npm ci` refuses
// a lock file whose packages name optional dependencies it does not list
// ("Missing: ... from lock file"). This records each missing one with its
// version and, from its name, its os and cpu: all `npm ci` needs to skip it on
// this platform, and to fetch it by version on the one it is for.
//
// Run it after every `npm install` that changes package-lock.json; `npm test`
// fails while the lock file needs it (`--check`).
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const OSES = ['darwin', 'win32', 'linux', 'android', 'freebsd', 'openharmony'];
const CPUS = ['arm64', 'x64', 'armv7', 'arm', 'ia32', 'ppc64', 's390x', 'loong64', 'riscv64'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = OSES.find((o) => parts.includes(o));
  const cpu = CPUS.find((c) => parts.includes(c));
  return { os: os === undefined ? undefined : [os], cpu: cpu === undefined ? undefined : [cpu === 'armv7' ? 'arm' : cpu] };
}

export function missingOptionalPackages(lock) {
  const packages = lock.packages;
  const missing = [];
  for (const [path, meta] of Object.entries(packages)) {
    for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
      const nested = path === '' ? `node_modules/${name}` : `${path}/node_modules/${name}`;
      if (packages[nested] === undefined && packages[`node_modules/${name}`] === undefined)
        missing.push({ name, version, dev: meta.dev === true });
    }
  }
  return missing;
}

const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const missing = missingOptionalPackages(lock);
if (process.argv.includes('--check')) {
  if (missing.length > 0) {
    console.error(
      `package-lock.json lacks ${missing.length} optional platform packages (${missing[0].name}...): run \`node scripts/complete-lockfile.mjs\` and commit it.`,
    );
    process.exit(1);
  }
} else {
  for (const { name, version, dev } of missing) {
    const { os, cpu } = platformOf(name);
    lock.packages[`node_modules/${name}`] = {
      version,
      ...(dev ? { dev: true } : {}),
      optional: true,
      ...(os ? { os } : {}),
      ...(cpu ? { cpu } : {}),
    };
  }
  const [root, ...rest] = Object.entries(lock.packages);
  lock.packages = Object.fromEntries([root, ...rest.toSorted(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
  writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
  console.log(`recorded ${missing.length} optional platform packages`);
}
