import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Application } from '../../app/application';
import type { Principal } from '../../domain/principal';
import { toApiEvent } from './api-mapping';

/** Lists from a query parameter: comma-separated, empty entries dropped. */
function listOf(query: URLSearchParams, name: string): string[] {
  return (query.get(name) ?? '').split(',').filter((value) => value !== '');
}

/**
 * Serves lifecycle events as server-sent events, from the same EventFeed
 * WatchEvents streams (its filters, resume points and queue scoping): one
 * `id:`/`data:` record per event, a comment line as keepalive. A client
 * resumes with the Last-Event-ID header (or `after`). The feed is opened
 * before the 200 goes out, so a refused request gets an error answer
 * instead of an empty stream; `register` lets the server end the stream on
 * shutdown.
 */
export async function streamEvents(
  app: Application,
  caller: Principal,
  request: IncomingMessage,
  response: ServerResponse,
  query: URLSearchParams,
  register: (end: () => void) => () => void,
): Promise<void> {
  const lastEventId = request.headers['last-event-id'];
  const stream = await app.events.open(caller, {
    types: listOf(query, 'types'),
    queues: listOf(query, 'queues'),
    jobTypes: listOf(query, 'jobTypes'),
    jobIds: listOf(query, 'jobIds'),
    after: typeof lastEventId === 'string' && lastEventId !== '' ? lastEventId : (query.get('after') ?? ''),
    includeHeartbeats: query.get('heartbeats') === 'true',
  });
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  response.write(': open\n\n');
  const keepalive = setInterval(() => response.write(': keepalive\n\n'), app.context.settings.streamKeepaliveMs);
  const unregister = register(() => stream.close());
  request.on('close', () => stream.close());
  try {
    for await (const event of stream.events) response.write(`id: ${event.id}\ndata: ${JSON.stringify(toApiEvent(event))}\n\n`);
  } catch (error) {
    // A watcher too far behind: tell it where it stands; it reconnects with Last-Event-ID.
    response.write(`event: error\ndata: ${JSON.stringify({ message: error instanceof Error ? error.message : 'stream ended' })}\n\n`);
  } finally {
    clearInterval(keepalive);
    unregister();
    stream.close();
    response.end();
  }
}
