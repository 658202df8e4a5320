import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The FileDescriptorSet that `npm run generate` builds with buf from proto/
 * (gen/descriptor-set.binpb), found from the project root so that the same
 * code works from src/ and from dist/.
 */
export function loadDescriptorSet(): Uint8Array {
  let dir = __dirname;
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the project root (package.json) above ' + __dirname);
    dir = parent;
  }
  return readFileSync(join(dir, 'gen', 'descriptor-set.binpb'));
}
