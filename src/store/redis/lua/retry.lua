--[[
  retry: discarded -> available (manual retry from the dead letter set).
  Pre:  the job exists and is discarded.
  Post: attempt 0, errors and result cleared (ojs-core 6.3); out of the
        retention index; back in its ready queue.
  ARGV: 1 now, 2 job id.
  Returns: {'not_found'} | {'invalid_state', state} | {'ok', 'discarded', '', job hash}.
]]
local id = ARGV[2]
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'queue')
if not job[1] then return { 'not_found' } end
if job[1] ~= 'discarded' then return { 'invalid_state', job[1] } end
redis.call('ZREM', K.finished .. 'discarded', id)
redis.call('HSET', key, 'attempt', 0, 'errors', '[]')
redis.call('HDEL', key, 'error', 'result', 'completedAt', 'deadLetter')
enter(id, job[2], 'discarded', 'available', ARGV[1])
publishSignals()
return { 'ok', 'discarded', '', redis.call('HGETALL', key) }
