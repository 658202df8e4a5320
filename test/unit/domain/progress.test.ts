import { OjsError } from '../../../src/domain/errors';
import { checkProgressUpdate } from '../../../src/domain/progress';

describe('progress updates (ojs-progress)', () => {
  it('clamps progress to 0..1', () => {
    expect(checkProgressUpdate({ progress: 1.5 })).toEqual({ progress: 1 });
    expect(checkProgressUpdate({ progress: -0.5 })).toEqual({ progress: 0 });
  });

  it('needs at least one of progress, data and checkpoint', () => {
    expect(() => checkProgressUpdate({})).toThrow(OjsError);
    expect(checkProgressUpdate({ checkpoint: { cursor: 1 } })).toEqual({ checkpoint: { cursor: 1 } });
  });

  it('refuses oversized data and checkpoints, and non-numbers', () => {
    expect(() => checkProgressUpdate({ data: { blob: 'x'.repeat(4_096) } })).toThrow(/data/);
    expect(() => checkProgressUpdate({ checkpoint: 'x'.repeat(64 * 1024) })).toThrow(/checkpoint/);
    expect(() => checkProgressUpdate({ progress: Number.NaN })).toThrow(/progress/);
  });
});
