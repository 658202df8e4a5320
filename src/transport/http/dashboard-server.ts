import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Application } from '../../app/application';
import { invalidRequest, OjsError } from '../../domain/errors';
import { join } from 'node:path';
import { projectRoot } from '../../project-root';
import { reloadingPrincipals, type SecurityOptions } from '../grpc/server-security';
import { apiRoutes, operatorMethod, type ApiRoute } from './api-routes';
import { streamEvents } from './event-stream';
import { authorise, ruleOfMethod } from './http-auth';
import { toHttpError } from './http-error-mapping';
import { loadStaticAssets } from './static-assets';

export interface DashboardOptions {
  /** The address the gRPC port listens on too. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** The directory of the built browser bundle; dist/web by default. */
  assetsDir?: string;
  /** The gRPC port's security: its auth file names the dashboard's principals too (without one, every caller is ANONYMOUS). */
  security?: SecurityOptions;
}

/** A listening dashboard and how to stop it. */
export interface DashboardServer {
  readonly port: number;
  /** Stops accepting, ends event streams, and closes what is still open after `timeoutMs`. */
  close(timeoutMs: number): Promise<void>;
}

/** Largest request body read (a bulk call names at most 1,000 job ids). */
const MAX_BODY_BYTES = 256 * 1024;

/**
 * Headers of every answer: the bundle loads nothing from elsewhere (the
 * machines running it may have no internet), and no other site may frame
 * or read it.
 */
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * The web dashboard: its browser bundle and a JSON API over the application
 * layer the gRPC handlers use, on a port of its own (--dashboard-port).
 */
export async function startDashboardServer(app: Application, options: DashboardOptions): Promise<DashboardServer> {
  const assets = loadStaticAssets(options.assetsDir ?? join(projectRoot(), 'dist', 'web'));
  const authFile = options.security?.authFile;
  const principals =
    authFile === undefined ? undefined : reloadingPrincipals(authFile, options.security!.reloadIntervalMs, app.context.logger);
  const routes = apiRoutes(app, principals !== undefined);
  const streams = new Set<() => void>();
  const watchEvents = operatorMethod('watchEvents');
  const logger = app.context.logger;

  async function answerApi(request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
    const directory = principals?.value;
    const path = url.pathname.slice('/api/'.length);
    if (path === 'events' && request.method === 'GET') {
      const caller = authorise(request, directory, ruleOfMethod(watchEvents), watchEvents);
      return streamEvents(app, caller, request, response, url.searchParams, (end) => {
        streams.add(end);
        return () => streams.delete(end);
      });
    }
    const found = findRoute(routes, request.method ?? '', path);
    if (found === undefined) throw new OjsError('not_found', `no API route ${request.method ?? ''} /api/${path}`);
    const caller = authorise(request, directory, ruleOfMethod(found.route.grpcMethod), found.route.grpcMethod);
    // Only JSON bodies: a cross-site form or simple request cannot send one without a preflight, which is never granted.
    if (request.method === 'POST' && !/^application\/json\b/i.test(request.headers['content-type'] ?? '')) {
      throw invalidRequest('content-type', 'must be application/json');
    }
    const body = request.method === 'POST' ? await readJson(request) : undefined;
    sendJson(response, 200, await found.route.handle({ caller, params: found.params, query: url.searchParams, body }));
  }

  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://dashboard');
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.setHeader(name, value);
    if (url.pathname.startsWith('/api/')) {
      answerApi(request, response, url).catch((error: unknown) => {
        const { status, body } = toHttpError(error, logger);
        if (response.headersSent) response.end();
        else sendJson(response, status, body);
      });
      return;
    }
    const asset = request.method === 'GET' ? assets.get(url.pathname === '/' ? '/index.html' : url.pathname) : undefined;
    if (asset === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
      return;
    }
    response.writeHead(200, { 'content-type': asset.contentType, 'cache-control': 'no-cache' }).end(asset.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    principals?.close();
    throw error;
  });
  // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- a server listening on a TCP port has an AddressInfo
  const port = (server.address() as AddressInfo).port;
  logger.info({ host: options.host, port, isAuthRequired: principals !== undefined }, 'dashboard listening');
  return {
    port,
    async close(timeoutMs: number): Promise<void> {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const end of streams) end();
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
      await closed;
      clearTimeout(timer);
      principals?.close();
    },
  };
}

/** The route for a method and path (after /api/), with the path's parameters. */
function findRoute(
  routes: readonly ApiRoute[],
  method: string,
  path: string,
): { route: ApiRoute; params: Record<string, string> } | undefined {
  const segments = path.split('/');
  for (const route of routes) {
    if (route.method !== method) continue;
    const pattern = route.path.split('/');
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((part, i) => {
      if (part.startsWith(':')) {
        params[part.slice(1)] = decodedSegment(segments[i]!);
        return segments[i] !== '';
      }
      return part === segments[i];
    });
    if (matches) return { route, params };
  }
  return undefined;
}

function decodedSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidRequest('path', 'is not a well-formed URL path');
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    // oxlint-disable-next-line typescript/no-unsafe-type-assertion -- a request without setEncoding yields Buffers
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new OjsError('payload_too_large', `request bodies are limited to ${MAX_BODY_BYTES} bytes`);
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw invalidRequest('body', 'is not JSON');
  }
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify(body));
}
