--[[
  retry: discarded -> available (manual retry from the dead letter set).
  Pre:  the job exists and is discarded.
  Post: attempt 0, errors and progress cleared (ojs-core 6.3); back in its ready queue
        (its retention entry goes stale: prune-terminal checks the state).
  ARGV: 1 now, 2 job id.
  Returns: {'not_found'} | {'invalid_state', state} | {'ok', 'discarded', '', job hash}.
]]
local id = ARGV[2]
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'queue')
if not job[1] then return { 'not_found' } end
if job[1] ~= 'discarded' then return { 'invalid_state', job[1] } end
redis.call('HDEL', key, 'error', 'progressAttempt')
enter(id, { queue = job[2] }, 'discarded', 'available', ARGV[1], { 'attempt', 0, 'errors', '[]' })
finish()
return { 'ok', 'discarded', '', redis.call('HGETALL', key) }
