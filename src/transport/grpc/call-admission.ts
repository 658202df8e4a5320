import type { MethodDescriptor } from 'nice-grpc';
import type { Principal } from '../../domain/principal';
import { JobServiceDefinition } from '../../../gen/ojs/server/v1/job_service';
import type { PrincipalUsage } from './principal-usage';

const ENQUEUE_PATH = `/${JobServiceDefinition.fullName}/${JobServiceDefinition.methods.enqueue.name}`;
/** A unary call that may wait as long as a stream (up to its max_wait), so it holds a stream slot too. */
const WAIT_FOR_JOB_PATH = `/${JobServiceDefinition.fullName}/${JobServiceDefinition.methods.waitForJob.name}`;

/**
 * Holds a principal's call to its limits (PrincipalUsage): the connection
 * it comes on, its enqueue rate, and, for long-lived calls (every streaming
 * method and WaitForJob), a stream slot, released by the function this
 * returns, which the caller runs however the call ends (answered, failed,
 * cancelled by the client, ended by shutdown). Short unary calls take no
 * slot: they are bounded by the streams a connection may carry times the
 * connections a principal may use. Throws the refusal of a call beyond a
 * limit. Runs after authentication; a call without a principal
 * (authentication off, or an open method such as health) is not limited.
 */
export function admitCall(
  usage: PrincipalUsage,
  principal: Principal,
  method: Pick<MethodDescriptor, 'path' | 'requestStream' | 'responseStream'>,
  request: unknown,
  peer: string,
): (() => void) | undefined {
  usage.admitConnection(principal, peer);
  if (method.path === ENQUEUE_PATH) usage.admitEnqueue(principal, jobCount(request));
  const isLongLived = method.requestStream || method.responseStream || method.path === WAIT_FOR_JOB_PATH;
  return isLongLived ? usage.openStream(principal) : undefined;
}

/** The jobs of an Enqueue request (decoded by then: undecodable requests are refused before this is asked). */
function jobCount(request: unknown): number {
  const jobs = typeof request === 'object' && request !== null && 'jobs' in request ? request.jobs : undefined;
  return Array.isArray(jobs) ? jobs.length : 0;
}
