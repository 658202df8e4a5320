import { ServerError, Status } from 'nice-grpc';

/** How a stopping replica ends open streams: UNAVAILABLE, so that clients reconnect to another replica. */
export function shuttingDown(): ServerError {
  return new ServerError(Status.UNAVAILABLE, 'server is shutting down; reconnect to another replica');
}
