import * as fc from 'fast-check';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import type { Job } from '../../../src/domain/job';
import { Job as ProtoJob } from '../../../gen/ojs/server/v1/job';
import { Delivery } from '../../../gen/ojs/server/v1/worker_service';
import { toProtoJob } from '../../../src/transport/grpc/job-mapper';
import { visibilityDeadline } from '../../../src/domain/lease';
import { writeDelivery, writeJob } from '../../../src/transport/grpc/job-wire';
import { propertyParameters } from '../../support/property';
import { jobs } from '../support/job-arbitrary';

/** A claimed job as a Delivery message, mapped field by field: a workflow job with its parent_results, `{}` when it runs after nothing. */
function toDelivery(job: Job): Delivery {
  const envelope = toProtoJob(job);
  if (job.workflow !== undefined) envelope.parentResults = job.parentResults ?? {};
  return { job: envelope, leaseToken: job.lease!.token, leaseExpiresAt: new Date(visibilityDeadline(job)) };
}

describe('a job written as bytes', () => {
  it('is the envelope the generated encoder writes from the mapped message, byte for byte', () => {
    fc.assert(
      fc.property(jobs, (job) => {
        expect(Buffer.from(writeJob(new BinaryWriter(), job).finish())).toEqual(Buffer.from(ProtoJob.encode(toProtoJob(job)).finish()));
      }),
      propertyParameters(300),
    );
  });

  it('is the delivery the generated encoder writes, parent_results included, byte for byte', () => {
    fc.assert(
      fc.property(jobs, (job) => {
        expect(Buffer.from(writeDelivery(new BinaryWriter(), job).finish())).toEqual(
          Buffer.from(Delivery.encode(toDelivery(job)).finish()),
        );
      }),
      propertyParameters(300),
    );
  });
});
