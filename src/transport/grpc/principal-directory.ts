import { createHash, timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../domain/principal';

/** One principal and the credentials that identify it. */
export interface PrincipalEntry {
  principal: Principal;
  /** SHA-256 digests (32 bytes each) of the bearer tokens it may present; several while a token is rotated. */
  tokenSha256: readonly Buffer[];
  /** Client-certificate identities ("URI:...", "DNS:..." or "CN:...", see peer-identity.ts) that are this principal. */
  certificateIdentities: readonly string[];
}

/**
 * The principals of the auth file, looked up by the credentials a call
 * presents. Tokens are held only as SHA-256 digests, so the file (a
 * Kubernetes Secret, a config map) never holds a usable token.
 */
export class PrincipalDirectory {
  private readonly byIdentity = new Map<string, Principal>();

  constructor(private readonly entries: readonly PrincipalEntry[]) {
    for (const entry of entries) {
      for (const identity of entry.certificateIdentities) this.byIdentity.set(identity, entry.principal);
    }
  }

  /**
   * The principal holding `token`. Its digest is compared with every digest
   * of the file, in constant time and without stopping at a match, so the
   * answer time tells nothing about which digests exist.
   */
  findByToken(token: string): Principal | undefined {
    const digest = createHash('sha256').update(token, 'utf8').digest();
    let found: Principal | undefined;
    for (const entry of this.entries) {
      for (const known of entry.tokenSha256) {
        if (timingSafeEqual(known, digest) && found === undefined) found = entry.principal;
      }
    }
    return found;
  }

  /** The principal one of a verified client certificate's identities names (the first that names one). */
  findByCertificate(identities: readonly string[]): Principal | undefined {
    for (const identity of identities) {
      const principal = this.byIdentity.get(identity);
      if (principal !== undefined) return principal;
    }
    return undefined;
  }

  /** How many principals the file declares (for the log line of a reload). */
  get size(): number {
    return this.entries.length;
  }
}
