import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './project-root';

/** The FileDescriptorSet that `npm run generate` builds with buf from proto/ (gen/descriptor-set.binpb). */
export function loadDescriptorSet(): Uint8Array {
  return readFileSync(join(projectRoot(), 'gen', 'descriptor-set.binpb'));
}
