import { invalidRequest } from '../domain/errors';

/** Returns `value`, or throws `invalid_request` naming `field` when it is empty. */
export function requireField(field: string, value: string): string {
  if (value.length === 0) throw invalidRequest(field, 'is required');
  return value;
}
