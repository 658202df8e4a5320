import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ServerHttp2Session } from 'node:http2';
import { Server } from 'node:net';

/** Node's announcement of every server that has started listening (a diagnostics channel of Node 20 and later). */
const LISTENING = 'tracing:net.server.listen:asyncEnd';

const isListeningMessage = (message: unknown): message is { server: Server } =>
  typeof message === 'object' && message !== null && 'server' in message && message.server instanceof Server;

/**
 * Runs `listen` (which resolves with the port it listens on) and hands every
 * HTTP/2 session the servers it started will accept to `onSession`.
 *
 * grpc-js creates its HTTP/2 servers privately and neither it nor nice-grpc
 * offers a hook on connections, but Node announces every server that starts
 * listening. Each one that starts while `listen` runs is watched at once, so
 * no early connection escapes; once the port is known, any that listens
 * elsewhere (another server of the process that started meanwhile) is let go.
 */
export async function listenWatchingSessions(
  listen: () => Promise<number>,
  onSession: (session: ServerHttp2Session) => void,
): Promise<number> {
  const started: Server[] = [];
  const onListening = (message: unknown): void => {
    if (!isListeningMessage(message)) return;
    message.server.on('session', onSession);
    started.push(message.server);
  };
  subscribe(LISTENING, onListening);
  let port: number | undefined;
  try {
    port = await listen();
    return port;
  } finally {
    unsubscribe(LISTENING, onListening);
    for (const server of started) {
      const address = server.address();
      if (typeof address !== 'object' || address?.port !== port) server.off('session', onSession);
    }
  }
}
