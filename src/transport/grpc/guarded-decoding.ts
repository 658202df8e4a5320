/**
 * What a request's bytes decode to when they cannot be decoded (truncated,
 * a wrong wire type, an int64 beyond the safe range, nesting past the
 * decoder's limit). grpc-js answers INTERNAL when a deserializer throws;
 * returning this instead lets the server middleware answer INVALID_ARGUMENT,
 * which is what a client that sent bad bytes has earned.
 */
export class UndecodableRequest {
  constructor(readonly reason: string) {}
}

/** The parts of a ts-proto message type that serving needs. */
interface MessageType<Message> {
  decode(input: Uint8Array): Message;
}

interface MethodDefinition {
  requestType: MessageType<unknown>;
}

interface ServiceDefinition {
  methods: Record<string, MethodDefinition>;
}

/**
 * The definition with every request decoder guarded: one that throws gives
 * an {@link UndecodableRequest} instead. Handlers never see one: the server
 * middleware turns it into INVALID_ARGUMENT before they run.
 */
export function guardDecoding<Definition extends ServiceDefinition>(definition: Definition): Definition {
  const methods: Record<string, MethodDefinition> = {};
  for (const [key, method] of Object.entries(definition.methods)) {
    const type = method.requestType;
    const guarded = (input: Uint8Array): unknown => {
      try {
        return type.decode(input);
      } catch (error) {
        return new UndecodableRequest(error instanceof Error ? error.message : 'unreadable bytes');
      }
    };
    methods[key] = { ...method, requestType: { ...method.requestType, decode: guarded } };
  }
  // Same shape as `definition`; only the decoders differ, and their stand-in never reaches a handler.
  return { ...definition, methods };
}
