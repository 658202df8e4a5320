import { createClientFactory, type Channel, type MethodDefinition, type TsProtoServiceDefinition } from 'nice-grpc';
import { errorDetailsClientMiddleware } from 'nice-grpc-error-details';

/** The message a ts-proto message type decodes to. */
type Decoded<Type> = Type extends { decode(input: Uint8Array): infer Message } ? Message : never;

/** Every method of a service, taking its request as bytes encoded already and decoding its response. */
export type EncodedRequests<Service extends TsProtoServiceDefinition> = {
  [M in keyof Service['methods']]: MethodDefinition<
    Uint8Array,
    Uint8Array,
    Decoded<Service['methods'][M]['responseType']>,
    Decoded<Service['methods'][M]['responseType']>,
    Service['methods'][M]['requestStream'],
    Service['methods'][M]['responseStream']
  >;
};

/**
 * The service with requests sent as given bytes: a client of it can send
 * what no generated encoder writes (out-of-range int64 seconds, invalid
 * UTF-8, appended fields) and still read answers and error details as a
 * generated client does.
 */
export function encodedRequests<Service extends TsProtoServiceDefinition>(definition: Service): EncodedRequests<Service> {
  const methods: Record<string, MethodDefinition<Uint8Array, Uint8Array, unknown, unknown>> = {};
  for (const [key, method] of Object.entries(definition.methods)) {
    methods[key] = {
      path: `/${definition.fullName}/${method.name}`,
      requestStream: method.requestStream,
      responseStream: method.responseStream,
      requestSerialize: (bytes) => bytes,
      requestDeserialize: (bytes) => bytes,
      responseSerialize: (response) => method.responseType.encode(response).finish(),
      responseDeserialize: (bytes): unknown => method.responseType.decode(bytes),
      options: {},
    };
  }
  return methods as EncodedRequests<Service>;
}

const clientFactory = createClientFactory().use(errorDetailsClientMiddleware);

/** A client of `definition` over `channel` that sends encoded requests (errors carry their details, as rpcError reads them). */
export function encodedClient<Service extends TsProtoServiceDefinition>(definition: Service, channel: Channel) {
  return clientFactory.create(encodedRequests(definition), channel);
}
