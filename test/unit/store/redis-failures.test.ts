import { ReplyError } from 'ioredis';
import { OjsError } from '../../../src/domain/errors';
import { redisFailure, refusalError } from '../../../src/store/redis/script-errors';

/** An error as Redis replies it (ioredis parses every "-CODE message" reply into one). */
function reply(message: string): Error {
  // oxlint-disable-next-line typescript/no-unsafe-call, typescript/no-unsafe-assignment -- ioredis declares ReplyError as `any`
  const error: unknown = new ReplyError(message);
  if (!(error instanceof Error)) throw new Error('ReplyError is not an Error');
  return error;
}

describe('Redis failures', () => {
  it('turn a full Redis (OOM) into a retryable queue_full naming the bound', () => {
    const cause = reply("OOM command not allowed when used memory > 'maxmemory'.");
    const error = redisFailure(cause);
    expect(error).toMatchObject({ code: 'queue_full', retryable: true, metadata: { bound: 'redis_maxmemory' } });
    expect(error.cause).toBe(cause);
  });

  it.each([
    'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.',
    'LOADING Redis is loading the dataset in memory',
    "READONLY You can't write against a read only replica.",
    'MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.',
    'CLUSTERDOWN The cluster is down',
    'TRYAGAIN Multiple keys request during rehashing of slot',
    'NOREPLICAS Not enough good replicas to write.',
  ])('turns "%s" into a retryable unavailable', (message) => {
    const cause = reply(message);
    expect(redisFailure(cause)).toMatchObject({ code: 'unavailable', retryable: true, cause });
  });

  it.each([
    'BADARG ARGV[1] is missing script: 1234, on @user_script:10.',
    'ERR value is not a valid float',
    'WRONGTYPE Operation against a key holding the wrong kind of value',
    'OOMPH not a code this switch knows',
  ])('turns any other refusal ("%s") into a backend_error carrying it as its cause', (message) => {
    const cause = reply(message);
    const error = redisFailure(cause);
    expect(error).toMatchObject({ code: 'backend_error', retryable: false });
    expect(error.cause).toBe(cause);
  });

  it('turns connection trouble and timeouts into unavailable, and keeps OjsErrors as they are', () => {
    expect(redisFailure(new Error('Command timed out'))).toMatchObject({ code: 'unavailable', retryable: true });
    expect(redisFailure(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toMatchObject({
      code: 'unavailable',
    });
    const own = new OjsError('not_found', 'job j not found');
    expect(redisFailure(own)).toBe(own);
  });

  it('turns script statuses into the domain errors they stand for', () => {
    expect(refusalError({ status: 'not_found', jobId: 'j' })).toMatchObject({ code: 'not_found', metadata: { job_id: 'j' } });
    expect(refusalError({ status: 'not_found', workerId: 'w' })).toMatchObject({ code: 'not_found', metadata: { worker_id: 'w' } });
    expect(refusalError({ status: 'duplicate', jobId: 'j' })).toMatchObject({ code: 'duplicate' });
    expect(refusalError({ status: 'stale_lease', jobId: 'j', state: 'active' })).toMatchObject({
      code: 'invalid_state',
      metadata: { lease_problem: 'stale_lease' },
    });
    expect(refusalError({ status: 'invalid_state', jobId: 'j', state: 'completed', wanted: 'cancelled' })).toMatchObject({
      code: 'invalid_state',
      metadata: { from_state: 'completed', to_state: 'cancelled' },
    });
    expect(refusalError({ status: 'surprise' })).toMatchObject({ code: 'backend_error' });
  });
});
