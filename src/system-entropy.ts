import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import type { Entropy } from './app/ports';

/** Production identity and randomness: UUIDv7 job ids, random lease nonces, Math.random jitter. */
export const systemEntropy: Entropy = {
  newJobId: () => uuidv7(),
  newLeaseNonce: () => randomUUID(),
  random: () => Math.random(),
};
