import type { Job } from '../../domain/job';
import { FetchResponse } from '../../../gen/ojs/server/v1/worker_service';
import { encodeWith, framedType } from './encoded-messages';
import { writeDelivery } from './job-wire';

/** FetchResponse whose deliveries (field 1) travel encoded already, as frameDeliveries encodes them. */
const framed = framedType(FetchResponse, 1);

/** FetchResponse as the server encodes it: framed deliveries are written as they are. */
export const FramedFetchResponseType: typeof FetchResponse = { ...FetchResponse, ...framed.type };

/** Bytes one delivery adds to a message besides its own: its field key and length. */
const FIELD_OVERHEAD_BYTES = 6;

/**
 * Groups the deliveries of claimed jobs into FetchResponse messages of at
 * most `budgetBytes` (gRPC clients refuse messages above 4 MiB by
 * default). Each delivery is encoded once, here, where it is measured; a
 * delivery larger than the budget on its own travels alone.
 */
export function frameDeliveries(jobs: readonly Job[], serverTime: Date, budgetBytes: number): FetchResponse[] {
  const messages: FetchResponse[] = [];
  let parts: Uint8Array[] = [];
  let size = 0;
  const flush = (): void => {
    messages.push(framed.frame(parts, { deliveries: [], serverTime }));
    parts = [];
    size = 0;
  };
  for (const job of jobs) {
    const bytes = encodeWith((writer) => writeDelivery(writer, job));
    if (parts.length > 0 && size + bytes.length + FIELD_OVERHEAD_BYTES > budgetBytes) flush();
    parts.push(bytes);
    size += bytes.length + FIELD_OVERHEAD_BYTES;
  }
  if (parts.length > 0) flush();
  return messages;
}
