import { BinaryWriter } from '@bufbuild/protobuf/wire';
import { Delivery, FetchResponse } from '../../../gen/ojs/server/v1/worker_service';

/** Where a FetchResponse carries deliveries that are encoded already. */
const ENCODED_DELIVERIES = Symbol('encodedDeliveries');

/** A FetchResponse whose deliveries are bytes, encoded once when they were measured. */
type FramedFetchResponse = FetchResponse & { [ENCODED_DELIVERIES]: readonly Uint8Array[] };

/** Bytes one delivery adds to a message besides its own: its field key and length. */
const FIELD_OVERHEAD_BYTES = 6;

/**
 * Groups deliveries into FetchResponse messages of at most `budgetBytes`
 * (gRPC clients refuse messages above 4 MiB by default). Each delivery is
 * encoded once, here, where it is measured; a delivery larger than the
 * budget on its own travels alone.
 */
export function frameDeliveries(deliveries: readonly Delivery[], serverTime: Date, budgetBytes: number): FetchResponse[] {
  const messages: FetchResponse[] = [];
  let parts: Uint8Array[] = [];
  let size = 0;
  for (const delivery of deliveries) {
    const bytes = Delivery.encode(delivery).finish();
    if (parts.length > 0 && size + bytes.length + FIELD_OVERHEAD_BYTES > budgetBytes) {
      messages.push(framed(parts, serverTime));
      parts = [];
      size = 0;
    }
    parts.push(bytes);
    size += bytes.length + FIELD_OVERHEAD_BYTES;
  }
  if (parts.length > 0) messages.push(framed(parts, serverTime));
  return messages;
}

function framed(parts: readonly Uint8Array[], serverTime: Date): FramedFetchResponse {
  return { deliveries: [], serverTime, [ENCODED_DELIVERIES]: parts };
}

function isFramed(message: object): message is FramedFetchResponse {
  return ENCODED_DELIVERIES in message;
}

/**
 * FetchResponse as the server encodes it: framed deliveries are written as
 * they are (field 1, length-delimited, exactly what encoding each Delivery
 * would write), the rest by the generated encoder.
 */
export const FramedFetchResponseType: typeof FetchResponse = {
  ...FetchResponse,
  encode(message, writer = new BinaryWriter()) {
    if (isFramed(message)) for (const bytes of message[ENCODED_DELIVERIES]) writer.uint32(10).bytes(bytes);
    return FetchResponse.encode(message, writer);
  },
  // nice-grpc passes every response through fromPartial before encoding; a framed one is complete already.
  fromPartial(object) {
    return isFramed(object) ? object : FetchResponse.fromPartial(object);
  },
};
