import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { ChannelCredentials, Metadata, type ClientMiddleware } from 'nice-grpc';

/** PEM: the bytes themselves, or the path of a file that holds them. */
export type Pem = Buffer | string;

/** TLS to the server; with `cert` and `key` the client presents a certificate (mTLS). */
export interface TlsOptions {
  /** The CA that signed the server's certificate. Default: the system's trusted roots. */
  ca?: Pem;
  /** The client's certificate chain, for a server that requires client certificates. */
  cert?: Pem;
  /** The client certificate's private key. */
  key?: Pem;
}

/** How a Worker or Producer proves it talks to the right server, and who it is. */
export interface SecurityOptions {
  /**
   * TLS (`true`: trusting the system's roots). Default: TLS when OJS_TLS is
   * "true" or any of OJS_TLS_CA, OJS_TLS_CERT, OJS_TLS_KEY (file paths) is
   * set; else plaintext.
   */
  tls?: TlsOptions | boolean;
  /** A bearer token sent as `authorization: Bearer <token>` with every call. Default: OJS_TOKEN. */
  token?: string;
  /**
   * Sends the token over plaintext to an address beyond this machine (for a
   * mesh whose sidecar encrypts the hop). Default: OJS_ALLOW_PLAINTEXT_TOKEN
   * is "true"; else such a token is refused before anything is sent, as
   * anyone on the path could read it.
   */
  allowPlaintextToken?: boolean;
}

/**
 * What a channel is opened with: its credentials, and the token its calls
 * carry (through bearerToken). Exported, with resolveChannelSecurity, for
 * other clients of the contract (the `ojs` command) that open channels of
 * their own and should decide TLS and tokens as the SDK does.
 */
export interface ChannelSecurity {
  readonly credentials: ChannelCredentials;
  readonly token: string | undefined;
}

/**
 * The channel security of `address` from the options, falling back on the
 * environment. Throws, naming the setting, when a file cannot be read, a
 * certificate comes without its key, or a token would cross the network in
 * plaintext without the caller's consent.
 */
export function resolveChannelSecurity(address: string, options: SecurityOptions, env: NodeJS.ProcessEnv = process.env): ChannelSecurity {
  const tls = options.tls ?? tlsFromEnv(env);
  const token = options.token ?? nonEmpty(env['OJS_TOKEN']);
  if (tls === false && token !== undefined && !isLocal(address)) {
    const allowed = options.allowPlaintextToken ?? env['OJS_ALLOW_PLAINTEXT_TOKEN'] === 'true';
    if (!allowed)
      throw new Error(
        `refusing to send a token in plaintext to ${address}: anyone on the path could read it. ` +
          'Use TLS (the tls option, or OJS_TLS_CA), or, when a service mesh encrypts the connection, ' +
          'set allowPlaintextToken (or OJS_ALLOW_PLAINTEXT_TOKEN=true)',
      );
  }
  return { credentials: tls === false ? ChannelCredentials.createInsecure() : tlsCredentials(tls === true ? {} : tls), token };
}

function tlsFromEnv(env: NodeJS.ProcessEnv): TlsOptions | boolean {
  const [ca, cert, key] = (['OJS_TLS_CA', 'OJS_TLS_CERT', 'OJS_TLS_KEY'] as const).map((name) => {
    const path = nonEmpty(env[name]);
    return path === undefined ? undefined : readPem(path, name);
  });
  if (ca === undefined && cert === undefined && key === undefined) return env['OJS_TLS'] === 'true';
  return { ...(ca && { ca }), ...(cert && { cert }), ...(key && { key }) };
}

function tlsCredentials(tls: TlsOptions): ChannelCredentials {
  if ((tls.cert === undefined) !== (tls.key === undefined))
    throw new Error(
      'a client certificate needs its key and a key its certificate: set both tls.cert and tls.key (OJS_TLS_CERT, OJS_TLS_KEY)',
    );
  return ChannelCredentials.createSsl(pem(tls.ca, 'tls.ca'), pem(tls.key, 'tls.key'), pem(tls.cert, 'tls.cert'));
}

/** The PEM bytes of an option: given, or read from the path given; null (grpc-js's "none") when unset. */
function pem(value: Pem | undefined, setting: string): Buffer | null {
  if (value === undefined) return null;
  return typeof value === 'string' ? readPem(value, setting) : value;
}

function readPem(path: string, setting: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new Error(`${setting}: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Whether `address` (host:port, [v6]:port, or a gRPC target such as
 * dns:///host:port or unix:path) stays on this machine: loopback or a Unix
 * socket, where no one else can read plaintext.
 */
export function isLocal(address: string): boolean {
  if (address.startsWith('unix:')) return true;
  const target = address.replace(/^dns:(\/\/[^/]*\/)?/, '');
  const host = target.startsWith('[') ? target.slice(1, target.indexOf(']')) : target.split(':')[0]!;
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * Adds `authorization: Bearer <token>` to every call. A client middleware
 * rather than grpc-js call credentials, which grpc-js refuses on a
 * plaintext channel: a mesh sidecar may be what encrypts it.
 */
export function bearerToken(token: string): ClientMiddleware {
  const authorization = bearerAuthorization(token);
  return (call, context) =>
    call.next(call.request, { ...context, metadata: Metadata(context.metadata).set('authorization', authorization) });
}

/** The `authorization` metadata a token is sent as, on the calls through nice-grpc and on the worker streams alike. */
export function bearerAuthorization(token: string): string {
  return `Bearer ${token}`;
}
