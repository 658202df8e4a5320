--[[
  make-available: pending -> available (ActivateJob) or discarded ->
  available (RetryJob from the dead letter set): store.activate() and
  store.retry().
  Pre:  the job exists and is in the expected state, one from which the state
        machine allows available (domain.lua NEXT_STATES).
  Post: a fresh start (ojs-core 6.3): attempt 0, errors and the progress of
        the last attempt cleared (a pending job has none of them yet); back in
        its ready queue, with the waiting deadline of a job that never ran
        (its enqueue TTL applies again). The retention entry of a discarded
        job goes stale: prune-terminal checks the state.
  ARGV: 1 now, 2 job id, 3 expected state.
  Returns: {'not_found'} | {'invalid_state', state} | {'ok', previous state, '', job hash}.
  Atomic: one script; every argument is checked before the first write.
]]
argCount(3)
local now = argNow(1)
local id = argId(2)
local expected = argMember(3, IS_JOB_STATE)
if not NEXT_STATES[expected].available then refuse(3, 'is not a state the state machine lets move to available') end
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'queue', 'discardAt', 'ttlAt')
if not job[1] then return { 'not_found' } end
if job[1] ~= expected then return { 'invalid_state', job[1] } end
redis.call('HDEL', key, 'error', 'progressAttempt')
local deadline = waitingDeadline(job[3], job[4], 0)
enter(id, { queue = job[2], deadline = deadline }, expected, 'available', now, { 'attempt', 0, 'errors', '[]' })
finish()
return { 'ok', expected, '', redis.call('HGETALL', key) }
