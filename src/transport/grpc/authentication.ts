import { permissionDenied, unauthenticated } from '../../domain/errors';
import type { Principal } from '../../domain/principal';
import { isAllowed, type MethodRule } from './method-rules';
import { PEER_IDENTITIES_KEY, peerIdentitiesOf } from './peer-identity';
import type { PrincipalDirectory } from './principal-directory';
import type { RequestMetadata } from './request-metadata';

/**
 * The principal a call runs as: undefined for a call that carries none (an
 * open method, or authentication off); throws UNAUTHENTICATED or
 * PERMISSION_DENIED for a call that may not run.
 */
export type Authenticate = (methodPath: string, metadata: RequestMetadata) => Principal | undefined;

/**
 * Authentication and authorisation of every call when an auth file is set.
 * Open methods (health and reflection unless configured otherwise) pass as
 * they are. Any other call needs a principal, found by its bearer token
 * (`authorization: Bearer <token>`, or `x-ojs-api-key: <token>` as
 * ojs-grpc-binding 11.2 names it) or else by its verified client
 * certificate, and one of the roles the method's rule allows (any role when
 * the rule asks only for a principal). Refusals are UNAUTHENTICATED or PERMISSION_DENIED, and say nothing
 * of which principals, tokens or roles exist.
 *
 * @param directory The current principals (the auth file is reloaded while the server runs);
 *   undefined when authentication is off and every caller is ANONYMOUS.
 * @param rules The authorisation table (method-rules.ts), as configured.
 */
export function authenticator(directory: (() => PrincipalDirectory) | undefined, rules: ReadonlyMap<string, MethodRule>): Authenticate {
  return (methodPath, metadata) => {
    const rule = rules.get(methodPath);
    // Open calls carry no principal: their handlers use none.
    if (directory === undefined || rule === 'open') return undefined;
    const principal = identify(directory(), metadata);
    if (principal === undefined) throw unauthenticated();
    // A path without a rule is refused: a method added without one is closed, not open.
    if (rule === undefined || !isAllowed(rule, principal)) throw permissionDenied(methodPath);
    return principal;
  };
}

/**
 * The caller's principal. A presented token decides alone: a wrong token is
 * refused even on a connection whose certificate names a principal, so a
 * client never runs as someone other than it asked to be.
 */
function identify(directory: PrincipalDirectory, metadata: RequestMetadata): Principal | undefined {
  const token = presentedToken(metadata);
  if (token !== undefined) return token === '' ? undefined : directory.findByToken(token);
  const identities = peerIdentitiesOf(metadata.binary(PEER_IDENTITIES_KEY));
  return directory.findByCertificate(identities);
}

/** The bearer token of the call, if it sent one (an `authorization` value in another scheme counts as a wrong token). */
function presentedToken(metadata: RequestMetadata): string | undefined {
  const authorization = metadata.text('authorization');
  if (authorization !== undefined) {
    const match = /^Bearer +(\S+) *$/i.exec(authorization);
    return match === null ? '' : match[1];
  }
  return metadata.text('x-ojs-api-key');
}
