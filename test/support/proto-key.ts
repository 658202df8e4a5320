/**
 * Whether a JSON value holds an own `__proto__` key anywhere. No value of a
 * job can: args, meta and results arrive through the generated protobuf
 * decoder, which copies Struct keys by assignment and so drops that one,
 * as the generated encoder does. Property tests of what the envelope
 * carries leave such values out.
 */
export function hasProtoKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (!Array.isArray(value) && Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some(hasProtoKey);
}
