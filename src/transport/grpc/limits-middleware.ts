import type { CallContext, ServerMiddleware, ServerMiddlewareCall } from 'nice-grpc';
import { ANONYMOUS } from '../../domain/principal';
import { JobServiceDefinition } from '../../../gen/ojs/server/v1/job_service';
import { principalOf } from './auth-context';
import type { PrincipalUsage } from './principal-usage';

const ENQUEUE_PATH = `/${JobServiceDefinition.fullName}/${JobServiceDefinition.methods.enqueue.name}`;
/** A unary call that may wait as long as a stream (up to its max_wait), so it holds a stream slot too. */
const WAIT_FOR_JOB_PATH = `/${JobServiceDefinition.fullName}/${JobServiceDefinition.methods.waitForJob.name}`;

/**
 * Holds every principal to its limits (PrincipalUsage): the connection a
 * call comes on, its enqueue rate, and, for long-lived calls (every
 * streaming method and WaitForJob), a stream slot held until the call ends,
 * however it ends (answered, failed, cancelled by the client, ended by
 * shutdown). Short unary calls take no slot: they are bounded by the
 * streams a connection may carry times the connections a principal may use.
 * Runs after authentication; the anonymous caller (authentication off, or
 * an open method such as health) is not limited here.
 */
export function limitsMiddleware(usage: PrincipalUsage): ServerMiddleware {
  return async function* limit<Request, Response>(call: ServerMiddlewareCall<Request, Response>, context: CallContext) {
    const principal = principalOf(context);
    if (principal === ANONYMOUS) return yield* call.next(call.request, context);
    usage.admitConnection(principal, context.peer);
    if (call.method.path === ENQUEUE_PATH) usage.admitEnqueue(principal, jobCount(call.request));
    const isLongLived = call.method.requestStream || call.method.responseStream || call.method.path === WAIT_FOR_JOB_PATH;
    if (!isLongLived) return yield* call.next(call.request, context);
    const release = usage.openStream(principal);
    try {
      return yield* call.next(call.request, context);
    } finally {
      release();
    }
  };
}

/** The jobs of an Enqueue request (decoded by then: undecodable requests are refused before this middleware). */
function jobCount(request: unknown): number {
  const jobs = typeof request === 'object' && request !== null && 'jobs' in request ? request.jobs : undefined;
  return Array.isArray(jobs) ? jobs.length : 0;
}
