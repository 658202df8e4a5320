import { encodeJobFact } from '../../../src/store/redis/fact-codec';
import { readSettlements } from '../../../src/store/redis/scripts/outcome-items';
import { COMPLETION as completion } from '../../support/job-transitions';

describe('settlement outcomes read from ack.lua and fail.lua', () => {
  it('carry the state the job entered, and its transition as the fact line tells it', () => {
    const [outcome] = readSettlements(['ok', 'completed', encodeJobFact(completion)], [{ jobId: completion.jobId }], 'ack');
    expect(outcome).toMatchObject({ ok: true, state: 'completed' });
    expect(outcome!.ok && outcome!.transition).toEqual(completion);
  });

  it('decode the transition only when it is read: the answer to the worker needs only the state', () => {
    // A line that is no fact: reading it fails, and nothing reads it until then.
    const [outcome] = readSettlements(['ok', 'completed', 'not a fact'], [{ jobId: completion.jobId }], 'ack');
    expect(outcome).toEqual(expect.objectContaining({ ok: true, state: 'completed' }));
    expect(() => outcome!.ok && outcome!.transition).toThrow(/unexpected/i);
  });

  it('refuse a reply whose state is not a job state', () => {
    expect(() => readSettlements(['ok', 'finished', encodeJobFact(completion)], [{ jobId: completion.jobId }], 'ack')).toThrow(/finished/);
  });

  it('read three elements per item, in item order, and refuse a reply of another length', () => {
    const items = [{ jobId: 'job-a' }, { jobId: 'job-b' }];
    const outcomes = readSettlements(['stale_lease', 'active', '', 'ok', 'completed', encodeJobFact(completion)], items, 'ack');
    expect(outcomes.map((outcome) => outcome.ok)).toEqual([false, true]);
    expect(!outcomes[0]!.ok && outcomes[0]!.error.message).toMatch(/job-a/);
    expect(() => readSettlements(['ok', 'completed', encodeJobFact(completion)], items, 'ack')).toThrow(/three elements per item/);
  });
});
