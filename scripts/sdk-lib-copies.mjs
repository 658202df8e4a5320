#!/usr/bin/env node
// The SDK package (packages/sdk) ships the few generic helpers of lib/ it uses as copies in
// packages/sdk/lib/, as it ships its generated code in packages/sdk/gen/: a package cannot import
// outside itself, and lib/ is shared with the server. lib/ stays the one place they are written;
// `npm run generate` refreshes the copies and `npm test` fails while one differs (`--check`).
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
/** The helpers of lib/ the SDK imports (packages/sdk/src/*.ts import '../lib/<name>'). */
export const SDK_LIB_FILES = ['duration.ts', 'pause.ts', 'wakeup.ts'];
const copies = join(root, 'packages', 'sdk', 'lib');

/** Copies that are missing, differ from lib/, or are no longer wanted. */
export function staleSdkLibCopies() {
  const present = existsSync(copies) ? readdirSync(copies) : [];
  const differing = SDK_LIB_FILES.filter(
    (name) => !present.includes(name) || !readFileSync(join(root, 'lib', name)).equals(readFileSync(join(copies, name))),
  );
  return [...differing, ...present.filter((name) => !SDK_LIB_FILES.includes(name))];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.includes('--check')) {
    const stale = staleSdkLibCopies();
    if (stale.length > 0) {
      console.error(`packages/sdk/lib/ is stale (${stale.join(', ')}). Run \`npm run generate\` and commit it.`);
      process.exit(1);
    }
  } else {
    mkdirSync(copies, { recursive: true });
    for (const name of SDK_LIB_FILES) copyFileSync(join(root, 'lib', name), join(copies, name));
    const unwanted = staleSdkLibCopies();
    if (unwanted.length > 0) console.error(`remove from packages/sdk/lib/: ${unwanted.join(', ')}`);
  }
}
