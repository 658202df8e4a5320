/**
 * Who is calling (ojs-security): a principal, identified by a bearer token
 * or a client certificate, with roles and, optionally, the queues it may
 * use. Authorisation rules (which role may call what) live with the
 * transport's method table; this is what the rest of the server knows of
 * the caller.
 */
import type { PrincipalLimits } from './principal-limits';

/** The roles a principal can hold. */
export const ROLES = ['producer', 'worker', 'operator', 'reader', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface Principal {
  /** A stable name, unique per principal (recorded as the owner of the workers it registers). */
  readonly name: string;
  readonly roles: ReadonlySet<Role>;
  /** The queues it may use; undefined for every queue. */
  readonly queues?: ReadonlySet<string>;
  /** Its own limits where they differ from the server's. */
  readonly limits?: Partial<PrincipalLimits>;
}

/**
 * The caller when authentication is off (local development, or a mesh that
 * authenticates in its sidecar): every role, every queue. Its name is empty,
 * which is also the owner of workers registered without authentication.
 */
export const ANONYMOUS: Principal = { name: '', roles: new Set(ROLES) };

/** Whether `principal` may use `queue`. */
export function mayUseQueue(principal: Principal, queue: string): boolean {
  return principal.queues === undefined || principal.queues.has(queue);
}
