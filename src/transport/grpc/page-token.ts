import { invalidRequest } from '../../domain/errors';

/**
 * Page tokens of job listings: the store's cursor, base64url-encoded so that
 * clients treat it as opaque, checked on the way back in.
 */
export function toPageToken(cursor: string | undefined): string {
  return cursor === undefined ? '' : Buffer.from(cursor, 'utf8').toString('base64url');
}

/** The cursor a token names, or undefined for an empty token; refuses a token this server did not make. */
export function fromPageToken(token: string, isCursor: (cursor: string) => boolean, field = 'page_token'): string | undefined {
  if (token === '') return undefined;
  const cursor = Buffer.from(token, 'base64url').toString('utf8');
  if (token.length > 512 || !isCursor(cursor)) throw invalidRequest(field, 'is not a token this server gave');
  return cursor;
}
