import { inspect } from 'node:util';

/** How a caught value reads in a failure message: an Error as String() shows it ("Name: message"), anything else inspected. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.toString();
  return typeof error === 'string' ? error : inspect(error);
}
