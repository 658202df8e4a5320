import { createServer, type Server, type Socket } from 'node:net';
import { ServerProcess } from '../../tools/server-process';
import { jobSpec } from '../support/jobs';
import { connectTo } from '../support/test-server';

const SHUTDOWN_TIMEOUT_MS = 1_000;
/** Far longer than the stop may take: the flush to a collector that answers nothing waits this long. */
const EXPORT_TIMEOUT_MS = 300_000;

/** A TCP listener that accepts connections and never answers: a collector that hangs. */
async function silentCollector(): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The last resort of a graceful stop: when something outside the server
 * holds it up past the shutdown timeout (here the final metric export, to a
 * collector that accepts the connection and answers nothing), the process
 * exits anyway, with 1 and a log line saying so, instead of waiting for a
 * second signal. Runs in the memory project only: it is about the process.
 */
describe('a stop held up past its timeout', () => {
  it('ends the process shortly after the shutdown timeout, exiting 1', async () => {
    const collector = await silentCollector();
    const server = await ServerProcess.start(
      {
        OTEL_METRICS_EXPORTER: 'otlp',
        OTEL_TRACES_EXPORTER: 'none',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: String(EXPORT_TIMEOUT_MS),
        OTEL_METRIC_EXPORT_INTERVAL: String(EXPORT_TIMEOUT_MS),
        OTEL_METRIC_EXPORT_TIMEOUT: String(EXPORT_TIMEOUT_MS),
      },
      ['--shutdown-timeout', `${SHUTDOWN_TIMEOUT_MS}ms`],
    );
    try {
      const clients = connectTo(server.address);
      // A metric to flush.
      await clients.jobs.enqueue({ jobs: [jobSpec({ queue: 'overrun' })] });
      clients.channel.close();
      // Bounded well below the export timeout: a process that waits for the flush fails the test.
      expect(await server.stop('SIGTERM', SHUTDOWN_TIMEOUT_MS + 15_000)).toBe(1);
      expect(server.logs.some((line) => line.msg === 'shutdown did not finish in time: exiting now')).toBe(true);
      expect(server.logs.some((line) => line.msg === 'stopped')).toBe(false);
    } finally {
      await server.kill();
      await collector.close();
    }
  }, 30_000);
});
