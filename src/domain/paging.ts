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
  const request: PageRequest = { limit: pageLimit(pageSize) };
  if (pageToken === '') return request;
  const problem = tokenProblem(pageToken);
  if (problem !== undefined) throw invalidRequest('page_token', `is not a token this listing gave (${problem})`);
  request.after = pageToken;
  return request;
}

/** The page size a request asks for (0: the default). */
export function pageLimit(pageSize: number, field = 'page_size'): number {
  if (!Number.isInteger(pageSize) || pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
    throw invalidRequest(field, `must be from 0 (meaning ${DEFAULT_PAGE_SIZE}) to ${MAX_PAGE_SIZE}`);
  }
  return pageSize === 0 ? DEFAULT_PAGE_SIZE : pageSize;
}

/**
 * The page cut down to the items that fit `maxBytes` (a first item always
 * does), continuing after the last one kept: an answer must fit one gRPC
 * message, however large its items.
 */
export function pageWithinBytes<T>(page: Page<T>, maxBytes: number, bytesOf: (item: T) => number, keyOf: (item: T) => string): Page<T> {
  let bytes = 0;
  for (const [i, item] of page.items.entries()) {
    bytes += bytesOf(item);
    if (i > 0 && bytes > maxBytes) return { items: page.items.slice(0, i), nextAfter: keyOf(page.items[i - 1]!) };
  }
  return page;
}
