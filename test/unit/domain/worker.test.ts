import { OjsError, type FieldViolation } from '../../../src/domain/errors';
import { afterDirective, afterReport, desiredState, normalizeRegistration, type Worker } from '../../../src/domain/worker';

function worker(overrides: Partial<Worker> = {}): Worker {
  return {
    workerId: 'w1',
    hostname: 'h',
    pid: 1,
    queues: ['default'],
    concurrency: 10,
    labels: [],
    owner: '',
    registeredAt: 0,
    state: 'running',
    lastBeatAt: 0,
    lastSequence: 0,
    reportedJobIds: [],
    ...overrides,
  };
}

describe('worker lifecycle', () => {
  it('echoes the reported state when there is no directive, so a self-quieted worker stays quiet', () => {
    expect(desiredState(afterReport(worker(), 'quiet'))).toBe('quiet');
  });

  it('keeps a directive until the worker reports reaching it', () => {
    const directed = { ...worker(), ...afterDirective(worker(), 'quiet') };
    expect(desiredState(directed)).toBe('quiet');
    expect(afterReport(directed, 'running')).toEqual({ state: 'running', directive: 'quiet' });
    expect(afterReport(directed, 'quiet')).toEqual({ state: 'quiet' });
  });

  it('never moves backward from terminate', () => {
    expect(afterReport(worker({ state: 'terminate' }), 'running')).toEqual({ state: 'terminate' });
    expect(() => afterDirective(worker({ state: 'terminate' }), 'quiet')).toThrow(OjsError);
    expect(() => afterDirective(worker({ directive: 'terminate' }), 'running')).toThrow(OjsError);
  });

  it('lets an operator resume a quiet worker', () => {
    expect(afterDirective(worker({ state: 'quiet' }), 'running')).toEqual({ state: 'quiet', directive: 'running' });
  });

  it('keeps a worker running when an operator takes back a quiet directive before the worker reported it', () => {
    const quieted = { ...worker(), ...afterDirective(worker(), 'quiet') };
    const resumed = { ...quieted, ...afterDirective(quieted, 'running') };
    expect(desiredState(resumed)).toBe('running');
    // The worker saw the first directive and reports it: it is quiet because it was told, and is told to run again.
    const obeyed = { ...resumed, ...afterReport(resumed, 'quiet') };
    expect(desiredState(obeyed)).toBe('running');
    expect(afterReport(obeyed, 'running')).toEqual({ state: 'running' });
    // No directive is pending when the operator names the state the worker reported: nothing to keep.
    expect(afterDirective(worker(), 'running')).toEqual({ state: 'running' });
  });

  it('applies the registration defaults and reports every bad field', () => {
    const violations: FieldViolation[] = [];
    const registration = normalizeRegistration(
      { workerId: 'w', hostname: 'h', pid: 1, queues: [], concurrency: 0, labels: [] },
      violations,
    );
    expect(violations).toEqual([]);
    expect(registration).toMatchObject({ queues: ['default'], concurrency: 10 });

    normalizeRegistration({ workerId: '', hostname: 'h', pid: -1, queues: ['OK', 'a', 'a'], concurrency: 20_000, labels: [] }, violations);
    expect(violations.map((v) => v.field)).toEqual(['worker_id', 'pid', 'queues[0]', 'queues', 'concurrency']);
  });
});
