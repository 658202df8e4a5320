import { experimental, type ServerCredentials } from '@grpc/grpc-js';
import { createSecureContext } from 'node:tls';
import { ReloadingFiles } from '../../../lib/reloading-files';
import type { Logger } from '../../app/ports';

/** PEM files of the server's TLS identity and, for mTLS, of the CA its clients' certificates must chain to. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** When set, every client must present a certificate this CA signed (mTLS). */
  clientCaFile?: string;
}

/** Server credentials that follow their files, and how to stop following them. */
export interface ReloadingTlsCredentials {
  readonly credentials: ServerCredentials;
  close(): void;
}

interface TlsMaterial {
  identity: experimental.IdentityCertificateUpdate;
  clientCa: experimental.CaCertificateUpdate | null;
}

/**
 * TLS (and mTLS) credentials read from PEM files and reloaded when the files
 * change. New connections get the new certificate; open connections keep
 * the one they were made with (Node applies a new secure context to new
 * handshakes only), so a rotation drops no stream. A changed set that does
 * not make a valid context (a key that does not match its certificate, a
 * half-written file) is logged and the previous set stays in use.
 *
 * Throws at start-up when the files cannot be read or do not fit together.
 */
export function reloadingTlsCredentials(files: TlsFiles, reloadIntervalMs: number, logger: Logger): ReloadingTlsCredentials {
  const provider = new ReloadingCertificateProvider();
  const watched = new ReloadingFiles<TlsMaterial>({
    paths: [files.certFile, files.keyFile, ...(files.clientCaFile === undefined ? [] : [files.clientCaFile])],
    parse: tlsMaterial,
    intervalMs: reloadIntervalMs,
    onReload: (material) => {
      logger.info({ certFile: files.certFile }, 'TLS certificates reloaded; new connections use them');
      provider.update(material);
    },
    onError: (error) =>
      logger.error({ err: error, certFile: files.certFile }, 'TLS certificate files changed but are not usable; keeping the previous ones'),
  });
  provider.update(watched.value);
  const isMutual = files.clientCaFile !== undefined;
  // grpc-js's implementation takes the identity provider first, whatever the declaration's parameter names say.
  const credentials = experimental.createCertificateProviderServerCredentials(provider, isMutual ? provider : null, isMutual);
  return { credentials, close: () => watched.close() };
}

/** Validates the files together, as Node will use them; throws what OpenSSL objects to. */
function tlsMaterial([certificate, privateKey, clientCa]: readonly Buffer[]): TlsMaterial {
  createSecureContext({ cert: certificate, key: privateKey, ...(clientCa === undefined ? {} : { ca: clientCa }) });
  return {
    identity: { certificate: certificate!, privateKey: privateKey! },
    clientCa: clientCa === undefined ? null : { caCertificate: clientCa },
  };
}

/** Hands the current files to grpc-js, which turns each update into a new secure context. */
class ReloadingCertificateProvider implements experimental.CertificateProvider {
  private material: TlsMaterial | undefined;
  private readonly caListeners = new Set<experimental.CaCertificateUpdateListener>();
  private readonly identityListeners = new Set<experimental.IdentityCertificateUpdateListener>();

  update(material: TlsMaterial): void {
    this.material = material;
    for (const listener of this.identityListeners) listener(material.identity);
    for (const listener of this.caListeners) listener(material.clientCa);
  }

  // grpc-js registers its watcher only after adding these listeners: the first update must come after, on the next tick.
  addCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.add(listener);
    process.nextTick(() => listener(this.material?.clientCa ?? null));
  }

  removeCaCertificateListener(listener: experimental.CaCertificateUpdateListener): void {
    this.caListeners.delete(listener);
  }

  addIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.add(listener);
    process.nextTick(() => listener(this.material?.identity ?? null));
  }

  removeIdentityCertificateListener(listener: experimental.IdentityCertificateUpdateListener): void {
    this.identityListeners.delete(listener);
  }
}
