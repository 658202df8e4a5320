import { createServer, type Server } from 'node:http';

/**
 * An optional HTTP endpoint for orchestrator probes: GET /ready answers 200
 * while the worker takes jobs and 503 once it is quiet or stopping
 * (graceful-shutdown.md 8.1); GET /live answers 200 while the process runs.
 */
export class ReadinessEndpoint {
  private constructor(private readonly server: Server) {}

  static async listen(port: number, host: string, isReady: () => boolean): Promise<ReadinessEndpoint> {
    const server = createServer((request, response) => {
      const path = (request.url ?? '').split('?')[0];
      if (path === '/live') {
        response.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      } else if (path === '/ready') {
        const ready = isReady();
        response.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ready\n' : 'not ready\n');
      } else {
        response.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    return new ReadinessEndpoint(server);
  }

  get port(): number {
    const address = this.server.address();
    return typeof address === 'object' && address !== null ? address.port : 0;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
