import { ServerCredentials } from '@grpc/grpc-js';
import { isIP } from 'node:net';
import { ReloadingFiles } from '../../../lib/reloading-files';
import type { Logger } from '../../app/ports';
import { parseAuthFile } from './auth-file';
import { authenticator, type Authenticate } from './authentication';
import { DEFAULT_OPEN_SERVICE_ACCESS, methodRules, type HealthAccess, type ReflectionAccess } from './method-rules';
import type { PrincipalDirectory } from './principal-directory';
import { reloadingTlsCredentials, type TlsFiles } from './tls-credentials';

export type { TlsFiles };

/** How the server protects its port. Without TLS and an auth file it serves plaintext to ANONYMOUS callers. */
export interface SecurityOptions {
  tls?: TlsFiles;
  /** The principals (auth-file.ts); when set, every call but health and reflection needs one. */
  authFile?: string;
  /** Whether health checks on the main port need a principal (with an auth file); default open. */
  healthAccess?: HealthAccess;
  /** Whether reflection needs a principal (with an auth file) or is not served; default open. */
  reflectionAccess?: ReflectionAccess;
  /** How often the TLS and auth files are read again to pick up a rotation. */
  reloadIntervalMs: number;
}

/** What the gRPC server is started with: its port's credentials, who a call runs as, and how to stop reloading. */
export interface ServerSecurity {
  readonly credentials: ServerCredentials;
  readonly authenticate: Authenticate;
  close(): void;
}

/** Loads the TLS and auth files (throwing when they are not usable at start-up) and keeps them reloaded. */
export function serverSecurity(options: SecurityOptions | undefined, logger: Logger): ServerSecurity {
  const tls = options?.tls === undefined ? undefined : reloadingTlsCredentials(options.tls, options.reloadIntervalMs, logger);
  const authFile = options?.authFile;
  const principals = authFile === undefined ? undefined : reloadingPrincipals(authFile, options!.reloadIntervalMs, logger);
  return {
    credentials: tls?.credentials ?? ServerCredentials.createInsecure(),
    authenticate: authenticator(
      principals === undefined ? undefined : () => principals.value,
      methodRules({
        health: options?.healthAccess ?? DEFAULT_OPEN_SERVICE_ACCESS.health,
        reflection: options?.reflectionAccess ?? DEFAULT_OPEN_SERVICE_ACCESS.reflection,
      }),
    ),
    close(): void {
      tls?.close();
      principals?.close();
    },
  };
}

/**
 * The principals of the auth file, read now (throwing when it is not usable)
 * and again every `intervalMs`; a changed file that does not parse is logged
 * and the previous principals stay. The dashboard's HTTP port reads the same
 * file this way, so both transports know the same principals.
 */
export function reloadingPrincipals(authFile: string, intervalMs: number, logger: Logger): ReloadingFiles<PrincipalDirectory> {
  return new ReloadingFiles<PrincipalDirectory>({
    paths: [authFile],
    parse: ([text]) => parseAuthFile(text!.toString('utf8')),
    intervalMs,
    onReload: (directory) => logger.info({ authFile, principals: directory.size }, 'auth file reloaded'),
    onError: (error) => logger.error({ err: error, authFile }, 'auth file changed but is not usable; keeping the previous principals'),
  });
}

/**
 * The warning to log when the server listens beyond this machine with
 * neither TLS nor authentication: anyone who reaches the port can enqueue,
 * cancel and settle anything. Undefined when there is nothing to warn of
 * (a loopback address, or either protection on). A mesh that terminates
 * mTLS in its sidecar is a legitimate reason to run so; the warning says so.
 */
export function exposureWarning(host: string, options: SecurityOptions | undefined): string | undefined {
  if (isLoopback(host) || options?.tls !== undefined || options?.authFile !== undefined) return undefined;
  return (
    `listening on ${host} in plaintext with no authentication: anyone who reaches this port can enqueue, cancel and ` +
    'settle jobs and stop workers. Set --tls-cert/--tls-key and --auth-file, unless a service mesh does both in front of the server'
  );
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '[::1]';
}
