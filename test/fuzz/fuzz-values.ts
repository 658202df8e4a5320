import * as fc from 'fast-check';
import { invalidJson, rawTimestamp, validJson } from '../support/hostile-values';
import type { RawSecondsNanos } from '../support/raw-protobuf';
import type { Draw } from './draw';
import type { FuzzWorld } from './fuzz-world';
import type { StringsFor } from './message-generator';

/** Text no field expects: empty, unicode, control characters, UUIDs of the wrong kind, very long. */
export function hostileText(draw: Draw): string {
  return draw.weighted<string>([
    [4, () => draw.pick(['', 'a', 'default', 'é', 'a b', 'a\u0000b', '\u0085', '\ud800', 'A.B', '..', '-', '*', 'net.*'])],
    [3, () => Array.from({ length: draw.int(1, 24) }, () => String.fromCharCode(draw.int(0x21, 0x7e))).join('')],
    [2, () => Array.from({ length: draw.int(1, 12) }, () => String.fromCodePoint(draw.int(0xa0, 0x2fff))).join('')],
    [2, () => draw.uuidv7()],
    [1, () => draw.uuidv7().toUpperCase()],
    [1, () => 'x'.repeat(draw.pick([255, 256, 2_049, 10_001]))],
    [1, () => 'x'.repeat(40_000)],
  ]);
}

/**
 * Strings for generated requests: mostly live ids and names where a field
 * holds one (so that requests meet real workers, jobs and leases), hostile
 * text otherwise.
 */
export function worldStrings(world: FuzzWorld, draw: Draw): StringsFor {
  const or = (live: readonly string[], chance = 0.7): string =>
    live.length > 0 && draw.chance(chance) ? draw.pick(live) : hostileText(draw);
  return (fieldName) => {
    switch (fieldName) {
      case 'worker_id':
        return or(world.workerIds);
      case 'job_id':
      case 'id':
      case 'active_job_ids':
        return or(world.jobIds);
      case 'lease_token':
        return or(world.leases.map((lease) => lease.leaseToken));
      case 'queue':
      case 'queues':
        return or(world.queues);
      case 'label':
      case 'labels':
        return or(world.labels);
      case 'page_token':
        return or([...world.queues, ...world.workerIds], 0.5);
      case 'initial_interval':
      case 'max_interval':
        return draw.pick(['PT1S', 'PT0.01S', 'P365D', 'P366D', 'P999999999D', 'PTInfinityH', '', 'P1Y', hostileText(draw)]);
      case 'type':
        return draw.chance(0.6) ? draw.pick(['fz.echo', 'email.send', 'Timeout', 'job.completed', 'job.timeout']) : hostileText(draw);
      case 'service':
        return draw.pick(['', 'ojs.server.v1.JobService', 'grpc.health.v1.Health', hostileText(draw)]);
      default:
        return hostileText(draw);
    }
  };
}

/** One value of a fast-check arbitrary, drawn from the fuzzer's seed. */
function sampleOf<T>(arbitrary: fc.Arbitrary<T>, draw: Draw): T {
  return fc.sample(arbitrary, { seed: draw.seedForSample(), numRuns: 1 })[0]!;
}

/** A JSON value: mostly valid (unicode, -0, deep), sometimes one no store can hold. */
export function jsonValue(draw: Draw): unknown {
  return sampleOf(draw.chance(0.8) ? validJson : invalidJson(0), draw);
}

/** A timestamp at or beyond the edges of what the server stores, seconds beyond the safe range included. */
export function wildTimestamp(draw: Draw): RawSecondsNanos {
  return sampleOf(rawTimestamp(true), draw);
}
