import * as fc from 'fast-check';
import { checkJson, checkJsonObject, MAX_JSON_DEPTH } from '../../../src/domain/json';
import { Value } from '../../../gen/google/protobuf/struct';
import { propertyParameters } from '../../support/property';
import { hasProtoKey } from '../../support/proto-key';

/**
 * JSON as a producer might send it, including strings every UTF-8 length
 * class and escape exercises (an own `__proto__` key aside: see hasProtoKey).
 */
const jsonValue = fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' }).filter((value) => !hasProtoKey(value));

describe('checking and measuring JSON values', () => {
  it.each([null, 'a', 1.5, true, [1, [2]], { a: { b: null } }, {}, [], ''])('accepts %j unchanged', (value) => {
    const check = checkJson(value);
    expect(check).toMatchObject({ ok: true });
    expect(check.ok && check.value).toBe(value);
  });

  it.each([
    [Number.NaN, 'finite'],
    [Infinity, 'finite'],
    [undefined, 'without a kind'],
    [() => 1, 'no JSON-native kind'],
    [[1, Number.NaN], '[1]: numbers must be finite'],
    [{ a: { b: undefined } }, '.a: .b: a value without a kind'],
  ])('refuses %p, saying where and why', (value, problem) => {
    const check = checkJson(value);
    expect(check.ok).toBe(false);
    expect(!check.ok && check.problem).toContain(problem);
  });

  it(`refuses values nested deeper than ${MAX_JSON_DEPTH} levels`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < MAX_JSON_DEPTH; i++) deep = [deep];
    expect(checkJson(deep).ok).toBe(true);
    expect(checkJson([deep])).toEqual({ ok: false, problem: expect.stringContaining('nested deeper') as unknown });
  });

  it('turns negative zero into zero, copying only what holds it', () => {
    const untouched = { c: 'same' };
    const value = { a: [1, -0], b: untouched };
    const check = checkJson(value);
    expect(check.ok && check.value).toEqual({ a: [1, 0], b: { c: 'same' } });
    expect(check.ok && Object.is((check.value as { a: number[] }).a[1], 0)).toBe(true);
    expect(check.ok && (check.value as { b: object }).b).toBe(untouched);
    expect(value.a[1]).toBe(-0);
  });

  it('accepts only objects where an object is required', () => {
    expect(checkJsonObject({ a: 1 })).toMatchObject({ ok: true });
    for (const value of [[1], 'x', null, 3]) expect(checkJsonObject(value)).toEqual({ ok: false, problem: 'must be an object' });
  });

  it('measures the larger of the UTF-8 JSON and the protobuf Value encodings, exactly', () => {
    fc.assert(
      fc.property(jsonValue, (value) => {
        const check = checkJson(value);
        if (!check.ok) return false;
        const json = Buffer.byteLength(JSON.stringify(check.value));
        const wire = Value.encode(Value.wrap(check.value)).finish().length;
        expect(check.bytes).toBe(Math.max(json, wire));
        return true;
      }),
      propertyParameters(),
    );
  });
});
