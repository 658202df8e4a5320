import { randomUUID } from 'node:crypto';
import { uuidv7 } from 'uuidv7';
import type { Entropy } from '../../src/app/ports';

/** Real ids, but a jitter factor of exactly 1.0, so backoff delays are predictable. */
export const fixedJitterEntropy: Entropy = {
  newJobId: () => uuidv7(),
  newLeaseNonce: () => randomUUID(),
  random: () => 0.5,
};
