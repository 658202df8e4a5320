import { createHash } from 'node:crypto';

/** Lowercase hex SHA-256 of a text (UTF-8). */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}
