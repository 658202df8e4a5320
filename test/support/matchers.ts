/**
 * jest's asymmetric matchers, typed `unknown` rather than the `any` of
 * @types/jest, for the properties of typed expectation objects: the
 * no-unsafe-assignment lint rule refuses an `any` there.
 */

/** `expect.any(type)`: a value made by `type`, or a primitive of its kind. */
export function anyOf(type: abstract new (...args: never[]) => unknown): unknown {
  return expect.any(type);
}

/** `expect.objectContaining(sample)`: an object with at least these properties. */
export function objectContaining(sample: Record<string, unknown>): unknown {
  return expect.objectContaining(sample);
}
