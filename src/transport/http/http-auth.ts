import type { IncomingMessage } from 'node:http';
import { permissionDenied, unauthenticated } from '../../domain/errors';
import { ANONYMOUS, type Principal } from '../../domain/principal';
import { isAllowed, methodRules, type MethodRule } from '../grpc/method-rules';
import type { PrincipalDirectory } from '../grpc/principal-directory';

/**
 * Who may use a dashboard route: the rule of the gRPC method the route
 * stands for, from the one authorisation table (method-rules.ts). A route
 * that reads queues follows ListQueues, one that retries jobs RetryJobs, so
 * a principal may do over HTTP exactly what it may do over gRPC.
 */
const RULES = methodRules();

/** The rule of the gRPC method at `grpcMethod` (its full path); a path the table does not know is a programming error. */
export function ruleOfMethod(grpcMethod: string): MethodRule {
  const rule = RULES.get(grpcMethod);
  if (rule === undefined) throw new Error(`no authorisation rule for ${grpcMethod}`);
  return rule;
}

/**
 * The caller of a request, checked against `rule`. Without an auth file
 * every caller is ANONYMOUS. With one, the request must carry
 * `Authorization: Bearer <token>` naming a principal (UNAUTHENTICATED, the
 * same answer whatever was wrong) that holds a role the rule allows
 * (PERMISSION_DENIED naming the method only). The browser sends the header
 * on every call, the event stream included (it is read with fetch, not
 * EventSource), so a token never appears in a URL, a log or the history.
 */
export function authorise(
  request: IncomingMessage,
  directory: PrincipalDirectory | undefined,
  rule: MethodRule,
  grpcMethod: string,
): Principal {
  if (directory === undefined) return ANONYMOUS;
  const principal = presentedPrincipal(request, directory);
  if (principal === undefined) throw unauthenticated();
  if (rule !== 'open' && !isAllowed(rule, principal)) throw permissionDenied(grpcMethod);
  return principal;
}

/** Whether `principal` may call the gRPC method at `grpcMethod`: what the dashboard asks to decide which controls to show. */
export function mayCall(principal: Principal, grpcMethod: string): boolean {
  const rule = ruleOfMethod(grpcMethod);
  return rule === 'open' || isAllowed(rule, principal);
}

function presentedPrincipal(request: IncomingMessage, directory: PrincipalDirectory): Principal | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '');
  return match === null ? undefined : directory.findByToken(match[1]!);
}
