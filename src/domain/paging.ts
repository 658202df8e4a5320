import { invalidRequest } from './errors';

/** One page of a listing: items after `after` (exclusive) in key order, at most `limit` of them. */
export interface PageRequest {
  after?: string;
  limit: number;
}

/** A page of items; `nextAfter` is present when more may follow (pass it as `after`). */
export interface Page<T> {
  items: T[];
  nextAfter?: string;
}

/** Listings answer this many items when the caller does not say. */
export const DEFAULT_PAGE_SIZE = 100;
/** Most items one page may hold: a listing never reads or answers more at once. */
export const MAX_PAGE_SIZE = 1_000;

/**
 * The page a listing request asks for. The token is the key of the last
 * item of the previous page; `tokenProblem` says why a token cannot be one.
 */
export function pageRequest(pageSize: number, pageToken: string, tokenProblem: (token: string) => string | undefined): PageRequest {
  if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
    throw invalidRequest('page_size', `must be from 0 (meaning ${DEFAULT_PAGE_SIZE}) to ${MAX_PAGE_SIZE}`);
  }
  const request: PageRequest = { limit: pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize };
  if (pageToken === '') return request;
  const problem = tokenProblem(pageToken);
  if (problem !== undefined) throw invalidRequest('page_token', `is not a token this listing gave (${problem})`);
  request.after = pageToken;
  return request;
}
