import type { CallContext } from 'nice-grpc';
import { ANONYMOUS, type Principal } from '../../domain/principal';

/** What the authentication middleware adds to every call's context. */
export interface AuthContext {
  principal: Principal;
}

/** The caller of a call: the principal the authentication middleware found, or ANONYMOUS when authentication is off. */
export function principalOf(context: CallContext): Principal {
  return (context as CallContext & Partial<AuthContext>).principal ?? ANONYMOUS;
}
