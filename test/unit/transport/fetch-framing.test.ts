import * as fc from 'fast-check';
import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { Delivery, FetchResponse } from '../../../gen/ojs/server/v1/worker_service';
import { FramedFetchResponseType, frameDeliveries } from '../../../src/transport/grpc/fetch-framing';
import { writeDelivery } from '../../../src/transport/grpc/job-wire';
import { propertyParameters } from '../../support/property';
import { activeJob } from '../support/active-job';
import { jobs } from '../support/job-arbitrary';

/** The bytes a delivery takes in a FetchResponse: its field key, its length and itself. */
const deliveryBytes = (delivery: Delivery): number =>
  FetchResponse.encode({ deliveries: [delivery], serverTime: undefined }).finish().length;
/** The bytes a message's deliveries take. */
const deliveriesBytes = (message: FetchResponse): number => message.deliveries.reduce((sum, delivery) => sum + deliveryBytes(delivery), 0);

describe('frameDeliveries', () => {
  it('sends every delivery once, in order, in messages within the budget (a larger one alone), as the server writes them', () => {
    fc.assert(
      fc.property(fc.array(jobs, { maxLength: 12 }), fc.integer({ min: 1, max: 3_000 }), (claimed, budget) => {
        const serverTime = new Date(1_700_000_000_123);
        const messages = frameDeliveries(claimed, serverTime, budget).map((message) =>
          FetchResponse.decode(FramedFetchResponseType.encode(message).finish()),
        );
        const expected = claimed.map((job) => Delivery.decode(writeDelivery(new BinaryWriter(), job).finish()));
        expect(messages.flatMap((message) => message.deliveries)).toEqual(expected);
        for (const message of messages) {
          expect(message.serverTime).toEqual(serverTime);
          expect(message.deliveries.length).toBeGreaterThan(0);
          // Over the budget only alone.
          expect(deliveriesBytes(message) <= budget || message.deliveries.length === 1).toBe(true);
        }
        // Each message but the last was cut because the next delivery would not fit.
        for (let i = 0; i + 1 < messages.length; i++) {
          expect(deliveriesBytes(messages[i]!) + deliveryBytes(messages[i + 1]!.deliveries[0]!)).toBeGreaterThan(budget);
        }
      }),
      propertyParameters(200),
    );
  });

  it('fills a message to exactly the budget, and cuts it one byte below', () => {
    const claimed = [activeJob({ id: 'job-1' }), activeJob({ id: 'job-2', args: ['longer'] })];
    const sizes = claimed.map((job) => deliveryBytes(Delivery.decode(writeDelivery(new BinaryWriter(), job).finish())));
    const exact = sizes[0]! + sizes[1]!;
    expect(frameDeliveries(claimed, new Date(0), exact)).toHaveLength(1);
    expect(frameDeliveries(claimed, new Date(0), exact - 1)).toHaveLength(2);
  });

  it('sends nothing for no jobs', () => {
    expect(frameDeliveries([], new Date(0), 1_000)).toEqual([]);
  });
});
