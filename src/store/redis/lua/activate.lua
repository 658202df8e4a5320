--[[
  activate: pending -> available.
  Pre:  the job exists and is pending.
  Post: the job is in its ready queue (one past its expires_at is never
        claimed and promote-due discards it).
  ARGV: 1 now, 2 job id.
  Returns: {'not_found'} | {'invalid_state', state} | {'ok', 'pending', '', job hash}.
]]
local id = ARGV[2]
local key = K.job .. id
local job = redis.call('HMGET', key, 'state', 'queue')
if not job[1] then return { 'not_found' } end
if job[1] ~= 'pending' then return { 'invalid_state', job[1] } end
enter(id, { queue = job[2] }, 'pending', 'available', ARGV[1])
finish()
return { 'ok', 'pending', '', redis.call('HGETALL', key) }
