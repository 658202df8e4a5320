import type { Job } from '../../domain/job';
import { FetchResponse } from '../../../gen/ojs/server/v1/worker_service';
import { framedType, splitItems } from './encoded-messages';
import { writeDelivery } from './job-wire';

/** FetchResponse whose deliveries (field 1) travel encoded already, as frameDeliveries encodes them. */
const framed = framedType(FetchResponse, 1);

/** FetchResponse as the server encodes it: framed deliveries are written as they are. */
export const FramedFetchResponseType = framed.type;

/**
 * Groups the deliveries of claimed jobs into FetchResponse messages whose
 * deliveries take at most `budgetBytes` (gRPC clients refuse messages
 * above 4 MiB by default). The deliveries are encoded once, here, where
 * they are measured; a delivery larger than the budget on its own travels
 * alone.
 */
export function frameDeliveries(jobs: readonly Job[], serverTime: Date, budgetBytes: number): FetchResponse[] {
  const deliveries = framed.items(jobs, writeDelivery);
  return splitItems(deliveries, budgetBytes).map((run) => framed.frame(run, { deliveries: [], serverTime }));
}
