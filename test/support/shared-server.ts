import { TestServer, type Clients, type TestServerOptions } from './test-server';

/** One TestServer for the tests of a describe block, and the streams each test opens. */
export interface SharedServer {
  /** The server, started before the block's first test and stopped (and audited) after its last. */
  readonly server: TestServer;
  /** Clients of the server. */
  readonly clients: Clients;
  /** Closes `stream` once the current test ends, whatever its outcome; returns it. */
  closeAfterTest<T extends { close(): void }>(stream: T): T;
}

/**
 * Shares one server across a block's tests (a server start costs more than
 * most tests), each test on queues of its own. Call inside `describe`.
 */
export function shareServer(options: TestServerOptions = {}): SharedServer {
  let server: TestServer | undefined;
  let clients: Clients | undefined;
  const streams: { close(): void }[] = [];
  beforeAll(async () => {
    server = await TestServer.start(options);
    clients = server.connect();
  });
  afterEach(() => {
    for (const stream of streams.splice(0)) stream.close();
  });
  afterAll(() => server?.stop());
  return {
    get server() {
      if (server === undefined) throw new Error('the shared server starts in beforeAll: use it inside a test');
      return server;
    },
    get clients() {
      if (clients === undefined) throw new Error('the shared server starts in beforeAll: use it inside a test');
      return clients;
    },
    closeAfterTest(stream) {
      streams.push(stream);
      return stream;
    },
  };
}
