import { REDACTED, redactedErrorReport, redactSerializedError, redactUrlPasswords } from '../../../lib/redact';

describe('redactUrlPasswords', () => {
  it.each([
    ['redis://:hunter2@cache:6379', 'redis://:***@cache:6379'],
    ['redis://default:hunter2@cache:6379/2', 'redis://default:***@cache:6379/2'],
    ['rediss://app:hunter2@cache.example:6380', 'rediss://app:***@cache.example:6380'],
    ['redis+cluster://app:hunter2@10.0.0.1:6379,10.0.0.2:6379', 'redis+cluster://app:***@10.0.0.1:6379,10.0.0.2:6379'],
    ['redis://app:p%40ss@cache', 'redis://app:***@cache'],
    // A raw @ or / in a password (the cluster URL reads up to its last @) leaves no piece behind.
    ['redis://app:p@ss/w@rd@cache:6379', 'redis://app:***@cache:6379'],
    [
      'Redis at redis://:hunter2@cache:6379 did not answer within 1000 ms',
      'Redis at redis://:***@cache:6379 did not answer within 1000 ms',
    ],
    ['two: "redis://a:x@h1" and "https://b:y@h2/p"', 'two: "redis://a:***@h1" and "https://b:***@h2/p"'],
  ])('hides the password of %s', (text, redacted) => {
    expect(redactUrlPasswords(text)).toBe(redacted);
  });

  it.each(['redis://cache:6379', 'redis://app@cache:6379', 'redis://127.0.0.1:6379/0', 'no url at all: a:b@c', ''])(
    'leaves %p, which has no password, as it is',
    (text) => {
      expect(redactUrlPasswords(text)).toBe(text);
    },
  );

  it('reports an error by its message and stack only, redacted', () => {
    const error = Object.assign(new Error('Redis at redis://:hunter2@cache:6379 did not answer'), { input: 'redis://:hunter2@cache' });
    const report = redactedErrorReport(error);
    expect(report).toContain(`redis://:${REDACTED}@cache:6379 did not answer`);
    expect(report).not.toContain('hunter2');
    expect(redactedErrorReport('redis://u:hunter2@h')).toBe('redis://u:***@h');
  });

  it("redacts a logger's serialized error, keeping its other fields", () => {
    const serialized = { type: 'Error', message: 'at rediss://u:hunter2@h', stack: 'Error: at rediss://u:hunter2@h\n    at x', code: 'E' };
    expect(redactSerializedError(serialized)).toEqual({
      type: 'Error',
      message: 'at rediss://u:***@h',
      stack: 'Error: at rediss://u:***@h\n    at x',
      code: 'E',
    });
  });
});
