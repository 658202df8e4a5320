import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The directory holding package.json, found from this file, so that data
 * files (the descriptor set, Lua scripts) load the same way from src/ under
 * the tests and from dist/ in production.
 */
export function projectRoot(): string {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find the project root (package.json) above ${__dirname}`);
    dir = parent;
  }
  return dir;
}
