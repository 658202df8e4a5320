import * as fc from 'fast-check';
import { EnqueueResponse } from '../../../gen/ojs/server/v1/job_service';
import { BeatResponse, WorkerState } from '../../../gen/ojs/server/v1/worker_service';
import { framedType, serializeComplete } from '../../../src/transport/grpc/encoded-messages';
import { toProtoJob } from '../../../src/transport/grpc/job-mapper';
import { writeJob } from '../../../src/transport/grpc/job-wire';
import { propertyParameters } from '../../support/property';
import { jobs } from '../support/job-arbitrary';

const ids = fc.array(fc.string({ maxLength: 40 }), { maxLength: 5 });
const beatResponses: fc.Arbitrary<BeatResponse> = fc.record({
  state: fc.constantFrom(
    WorkerState.WORKER_STATE_UNSPECIFIED,
    WorkerState.WORKER_STATE_RUNNING,
    WorkerState.WORKER_STATE_QUIET,
    WorkerState.WORKER_STATE_TERMINATE,
  ),
  serverTime: fc.option(fc.date({ min: new Date(0), max: new Date(253_402_300_799_999), noInvalidDate: true }), { nil: undefined }),
  cancelledJobIds: ids,
  timedOutJobIds: ids,
  reclaimedJobIds: ids,
  inReplyTo: fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
});

describe('serializeComplete', () => {
  it('writes exactly the bytes of the generated encoder', () => {
    fc.assert(
      fc.property(beatResponses, (message) => {
        const bytes = serializeComplete(BeatResponse, message);
        expect(Buffer.isBuffer(bytes)).toBe(true);
        expect(bytes).toEqual(Buffer.from(BeatResponse.encode(message).finish()));
      }),
      propertyParameters(),
    );
  });

  it('gives each message bytes of its own: the next one on the shared writer leaves them as they were', () => {
    fc.assert(
      fc.property(beatResponses, beatResponses, (first, second) => {
        const firstBytes = serializeComplete(BeatResponse, first);
        const copy = Buffer.from(firstBytes);
        serializeComplete(BeatResponse, second);
        expect(firstBytes).toEqual(copy);
      }),
      propertyParameters(),
    );
  });

  it('starts clean after a message that failed to encode half way', () => {
    const complete: BeatResponse = {
      state: WorkerState.WORKER_STATE_RUNNING,
      serverTime: new Date(1_000),
      cancelledJobIds: ['a'],
      timedOutJobIds: [],
      reclaimedJobIds: [],
      inReplyTo: 7,
    };
    // Typed as complete, but a repeated field is missing: the encoder throws after writing the fields before it.
    const broken = { ...complete, timedOutJobIds: undefined } as unknown as BeatResponse;
    expect(() => serializeComplete(BeatResponse, broken)).toThrow(TypeError);
    expect(BeatResponse.decode(serializeComplete(BeatResponse, complete))).toEqual(complete);
  });
});

describe('framedType', () => {
  const framed = framedType(EnqueueResponse, 1);

  it('writes items encoded beforehand as the generated encoder writes the whole message, byte for byte', () => {
    const outcomes = fc.array(fc.record({ deduplicated: fc.boolean(), replacedJobId: fc.string({ maxLength: 10 }) }), { maxLength: 3 });
    fc.assert(
      fc.property(fc.array(jobs, { maxLength: 6 }), outcomes, (stored, outcomeList) => {
        const message = framed.frame(
          framed.items(stored, (writer, job) => writeJob(writer, job)),
          { jobs: [], outcomes: outcomeList },
        );
        const expected = EnqueueResponse.encode({ jobs: stored.map((job) => toProtoJob(job)), outcomes: outcomeList }).finish();
        expect(Buffer.from(framed.type.encode(message).finish())).toEqual(Buffer.from(expected));
      }),
      propertyParameters(200),
    );
  });
});
