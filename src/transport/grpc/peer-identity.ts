import { Metadata, ServerInterceptingCall, type ServerInterceptor } from '@grpc/grpc-js';
import type { PeerCertificate } from 'node:tls';

/** The kinds of client-certificate identity an auth file can name: a SAN URI (SPIFFE ids), a SAN DNS name, the subject CN. */
export const CERTIFICATE_IDENTITY_KINDS = ['URI', 'DNS', 'CN'] as const;

/**
 * The metadata key that carries the verified client certificate's identities
 * from the grpc-js layer (which sees the TLS socket) to the call gate
 * (call-gate.ts, which sees only metadata). Whatever a client sends under this
 * key is dropped first, so only the server can set it.
 */
export const PEER_IDENTITIES_KEY = 'x-ojs-verified-peer-identities-bin';

/**
 * A grpc-js server interceptor that puts the identities of the client
 * certificate, when TLS verified one against --tls-client-ca, into the
 * call's metadata under PEER_IDENTITIES_KEY (JSON list of strings).
 */
export const peerIdentityInterceptor: ServerInterceptor = (_method, call) =>
  new ServerInterceptingCall(call, {
    start(next) {
      next({
        onReceiveMetadata(metadata: Metadata, nextMetadata: (metadata: Metadata) => void) {
          metadata.remove(PEER_IDENTITIES_KEY);
          // getAuthContext() holds a certificate only when the socket is TLS and the certificate was verified.
          const certificate = call.getAuthContext().sslPeerCertificate;
          if (certificate !== undefined) {
            metadata.set(PEER_IDENTITIES_KEY, Buffer.from(JSON.stringify(certificateIdentities(certificate))));
          }
          nextMetadata(metadata);
        },
      });
    },
  });

/** The identities of a verified client certificate as the auth file names them: "URI:...", "DNS:...", "CN:...". */
export function certificateIdentities(certificate: Pick<PeerCertificate, 'subject' | 'subjectaltname'>): string[] {
  const identities = subjectAltNames(certificate.subjectaltname ?? '').filter(([kind]) => kind === 'URI' || kind === 'DNS');
  const commonNames = certificate.subject?.CN;
  for (const name of typeof commonNames === 'string' ? [commonNames] : (commonNames ?? [])) identities.push(['CN', name]);
  return identities.map(([kind, value]) => `${kind}:${value}`);
}

/**
 * Parses Node's subjectaltname text ("DNS:a, URI:spiffe://b, IP Address:1.2.3.4").
 * Node quotes a value, JSON-style, when it holds a comma or other special
 * characters, so a crafted SAN cannot pass for two entries.
 */
function subjectAltNames(text: string): [string, string][] {
  const entries: [string, string][] = [];
  for (const match of text.matchAll(/([A-Za-z ]+):("(?:[^"\\]|\\.)*"|[^,]*)(?:, |$)/g)) {
    const raw = match[2]!;
    const value: unknown = raw.startsWith('"') ? JSON.parse(raw) : raw;
    if (typeof value === 'string') entries.push([match[1]!, value]);
  }
  return entries;
}

/** The identities the interceptor put into a call's metadata (none without a verified client certificate). */
export function peerIdentitiesOf(value: Uint8Array | undefined): string[] {
  if (value === undefined) return [];
  const identities: unknown = JSON.parse(Buffer.from(value).toString('utf8'));
  return Array.isArray(identities) ? identities.filter((identity): identity is string => typeof identity === 'string') : [];
}
