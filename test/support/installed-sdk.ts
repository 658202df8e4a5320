import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/project-root';

const run = promisify(execFile);
const SDK_DIR = join(projectRoot(), 'packages', 'sdk');

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  [field: string]: unknown;
}

/** A scratch project outside the repository with the SDK installed from its `npm pack` tarball, as a user gets it. */
export interface InstalledSdk {
  /** The scratch project: node_modules/ojs-sdk is the installed tarball. */
  readonly dir: string;
  /** Removes the scratch project. */
  remove(): void;
}

/**
 * Packs packages/sdk (its prepack builds it) and installs the tarball into a
 * fresh project in the system's temp directory with `npm ci --offline`, so
 * that it needs no network: the project's package-lock.json is cut from the
 * repository's (the SDK's dependencies and their own, with the versions and
 * integrities `npm ci` here already fetched into npm's cache), plus the
 * tarball. `npm install --offline` would need the registry's package
 * documents, which `npm ci` never fetches.
 */
export async function installPackedSdk(extraDependencies: readonly string[] = []): Promise<InstalledSdk> {
  const dir = mkdtempSync(join(tmpdir(), 'ojs-sdk-package-'));
  try {
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: SDK_DIR });
    const [packed] = JSON.parse(stdout) as [{ filename: string }];
    const tarball = readFileSync(join(dir, packed.filename));
    const sdk = JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')) as { name: string; version: string };
    const repoLock = JSON.parse(readFileSync(join(projectRoot(), 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
    const sdkEntry = repoLock.packages['packages/sdk']!;
    const wanted = { ...sdkEntry.dependencies, ...sdkEntry.peerDependencies };
    for (const name of extraDependencies) wanted[name] = repoLock.packages[`node_modules/${name}`]!.version!;
    const packages: Record<string, LockEntry> = {
      '': { name: 'scratch', dependencies: { [sdk.name]: `file:${packed.filename}`, ...pick(wanted, extraDependencies) } },
      [`node_modules/${sdk.name}`]: {
        ...sdkEntry,
        resolved: `file:${packed.filename}`,
        integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
      },
      ...closure(repoLock.packages, 'packages/sdk', wanted),
    };
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'scratch', private: true, dependencies: packages['']!.dependencies }, null, 2),
    );
    writeFileSync(
      join(dir, 'package-lock.json'),
      JSON.stringify({ name: 'scratch', lockfileVersion: 3, requires: true, packages }, null, 2),
    );
    await run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir });
    return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function pick(from: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(names.map((name) => [name, from[name]!]));
}

/**
 * The lock entries of `names` as required from `from`, and of everything they
 * need, at the paths node resolution finds them (nested first, then hoisted),
 * which are the paths they take in the scratch project too.
 */
function closure(lock: Record<string, LockEntry>, from: string, names: Record<string, string>): Record<string, LockEntry> {
  const found: Record<string, LockEntry> = {};
  const visit = (requirer: string, name: string, isOptional: boolean): void => {
    const path = locate(lock, requirer, name);
    if (path === undefined) {
      if (isOptional) return;
      throw new Error(`package-lock.json has no ${name} for ${requirer}`);
    }
    if (found[path] !== undefined) return;
    const entry = lock[path]!;
    found[path] = entry;
    for (const dep of Object.keys(entry.dependencies ?? {})) visit(path, dep, false);
    for (const dep of Object.keys(entry.optionalDependencies ?? {})) visit(path, dep, true);
    for (const dep of Object.keys(entry.peerDependencies ?? {})) visit(path, dep, entry.peerDependenciesMeta?.[dep]?.optional === true);
  };
  for (const name of Object.keys(names)) visit(from, name, false);
  return found;
}

function locate(lock: Record<string, LockEntry>, requirer: string, name: string): string | undefined {
  for (let base = requirer; ; base = base.slice(0, base.lastIndexOf('/node_modules/'))) {
    const nested = `${base}/node_modules/${name}`;
    if (lock[nested] !== undefined) return nested;
    if (!base.includes('/node_modules/')) break;
  }
  return lock[`node_modules/${name}`] === undefined ? undefined : `node_modules/${name}`;
}
